// Command localpath is the volume provisioner of the single-node cluster that
// hack/cluster.sh runs: for every pending claim of a StorageClass whose
// provisioner is uptime-operator.io/local-path it makes a directory on the
// node and a hostPath PersistentVolume bound to the claim, and when such a
// volume is released it deletes the directory and the volume.
//
// The directories are world-writable (as Rancher's local-path provisioner
// makes them), because kubelet applies no fsGroup to hostPath volumes and the
// chart's Pods run as a non-root user. Kubernetes' built-in hostPath
// provisioner makes them 0750 root-owned, which such a Pod cannot write.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// Provisioner is the StorageClass provisioner name this program serves.
const Provisioner = "uptime-operator.io/local-path"

const annProvisionedBy = "pv.kubernetes.io/provisioned-by"

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of a cluster admin")
	dir := flag.String("dir", "", "directory under which volumes are made")
	node := flag.String("node", "", "name of the node the volumes are on")
	flag.Parse()
	if *kubeconfig == "" || *dir == "" || *node == "" {
		log.Fatal("localpath: --kubeconfig, --dir and --node are required")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		log.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	p := &provisioner{cs: cs, dir: *dir, node: *node}
	log.Printf("localpath: provisioning %s volumes under %s", Provisioner, *dir)
	for {
		if err := p.sync(ctx); err != nil && ctx.Err() == nil {
			log.Printf("localpath: %v", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Second):
		}
	}
}

type provisioner struct {
	cs   kubernetes.Interface
	dir  string
	node string
}

// sync provisions every pending claim of our classes and deletes every
// released volume of ours; it is a level-triggered pass over the cluster.
func (p *provisioner) sync(ctx context.Context) error {
	classes, err := p.cs.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	ours := map[string]bool{}
	for _, c := range classes.Items {
		if c.Provisioner == Provisioner {
			ours[c.Name] = true
		}
	}
	claims, err := p.cs.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range claims.Items {
		c := &claims.Items[i]
		if c.Spec.StorageClassName == nil || !ours[*c.Spec.StorageClassName] ||
			c.Spec.VolumeName != "" || c.Status.Phase != corev1.ClaimPending || c.DeletionTimestamp != nil {
			continue
		}
		if err := p.provision(ctx, c); err != nil {
			log.Printf("localpath: claim %s/%s: %v", c.Namespace, c.Name, err)
		}
	}
	volumes, err := p.cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range volumes.Items {
		v := &volumes.Items[i]
		if v.Annotations[annProvisionedBy] != Provisioner || v.Status.Phase != corev1.VolumeReleased ||
			v.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete || v.Spec.HostPath == nil {
			continue
		}
		if err := os.RemoveAll(v.Spec.HostPath.Path); err != nil {
			log.Printf("localpath: volume %s: %v", v.Name, err)
			continue
		}
		if err := p.cs.CoreV1().PersistentVolumes().Delete(ctx, v.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			log.Printf("localpath: volume %s: %v", v.Name, err)
			continue
		}
		log.Printf("localpath: deleted volume %s (%s)", v.Name, v.Spec.HostPath.Path)
	}
	return nil
}

func (p *provisioner) provision(ctx context.Context, c *corev1.PersistentVolumeClaim) error {
	name := "pvc-" + string(c.UID)
	path := filepath.Join(p.dir, fmt.Sprintf("%s_%s_%s", c.Namespace, c.Name, c.UID))
	if err := os.MkdirAll(path, 0o777); err != nil {
		return err
	}
	// MkdirAll's mode is masked by the umask; the Pods' user needs write access.
	if err := os.Chmod(path, 0o777); err != nil {
		return err
	}
	hostPathType := corev1.HostPathDirectory
	size := c.Spec.Resources.Requests[corev1.ResourceStorage]
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{annProvisionedBy: Provisioner}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   c.Spec.AccessModes,
			VolumeMode:                    c.Spec.VolumeMode,
			StorageClassName:              *c.Spec.StorageClassName,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			ClaimRef: &corev1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: c.Namespace, Name: c.Name, UID: c.UID,
			},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: path, Type: &hostPathType},
			},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{p.node},
				}}}},
			}},
		},
	}
	_, err := p.cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err == nil {
		log.Printf("localpath: provisioned %s for %s/%s at %s", name, c.Namespace, c.Name, path)
	}
	return err
}
