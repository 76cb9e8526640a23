package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// seedMonitors writes Monitors from..n-1 straight into etcd (its JSON
// gateway), bypassing kube-apiserver and the admission webhooks, as copies
// of a Monitor that went through them (the webhooks' defaults and
// finalizer included). On this shared machine creating 100,000 Monitors
// through kube-apiserver and the webhooks takes longer than a session has;
// the creates that did go through them are measured and printed, and the
// seeded rest only serve the measurements that start from Monitors in
// place (the manager's start, steady state, REST, detection), for which
// how a Monitor got into etcd makes no difference.
func seedMonitors(ctx context.Context, cl *cluster, t *targets, from, n, interval int) error {
	var tmpl monv1.Monitor
	if err := cl.c.Get(ctx, client.ObjectKey{Namespace: workspaceNS, Name: monitorName(0)}, &tmpl); err != nil {
		return fmt.Errorf("read a created monitor as the template: %w", err)
	}
	etcd := strings.TrimSuffix(cl.env.EtcdURL, "/")
	hc := &http.Client{Timeout: time.Minute}
	have, err := etcdNames(ctx, hc, etcd)
	if err != nil {
		return err
	}
	say("%d Monitors in etcd", len(have))
	const perTxn = 100 // etcd's --max-txn-ops is 128
	type op struct {
		RequestPut struct {
			Key   string `json:"key"`
			Value string `json:"value"`
		} `json:"requestPut"`
	}
	last := time.Now()
	for start := from; start < n; start += perTxn {
		var ops []op
		for i := start; i < min(start+perTxn, n); i++ {
			if have[monitorName(i)] {
				continue
			}
			m := monv1.Monitor{TypeMeta: tmpl.TypeMeta, ObjectMeta: *tmpl.ObjectMeta.DeepCopy(), Spec: *tmpl.Spec.DeepCopy()}
			m.APIVersion, m.Kind = monv1.GroupVersion.String(), "Monitor"
			m.Name, m.UID = monitorName(i), types.UID(uuid.NewString())
			m.ResourceVersion, m.ManagedFields = "", nil
			m.CreationTimestamp.Time = time.Now().UTC().Truncate(time.Second)
			m.Spec.Name, m.Spec.URL, m.Spec.IntervalSeconds = fmt.Sprintf("Bench %d", i), t.url(i), int32(interval)
			raw, err := json.Marshal(&m)
			if err != nil {
				return err
			}
			var o op
			o.RequestPut.Key = base64.StdEncoding.EncodeToString([]byte("/registry/" + monv1.GroupVersion.Group + "/monitors/" + workspaceNS + "/" + m.Name))
			o.RequestPut.Value = base64.StdEncoding.EncodeToString(raw)
			ops = append(ops, o)
		}
		if len(ops) == 0 {
			continue
		}
		body, _ := json.Marshal(map[string]any{"success": ops})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, etcd+"/v3/kv/txn", bytes.NewReader(body))
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return fmt.Errorf("etcd txn: %w", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("etcd txn: %s", resp.Status)
		}
		if time.Since(last) > 10*time.Second {
			say("  %d seeded", start+perTxn)
			last = time.Now()
		}
	}
	return nil
}

// etcdNames lists the names of the Monitors in etcd (keys only, from
// etcd itself: a kube-apiserver busy with a fresh manager's list times out).
func etcdNames(ctx context.Context, hc *http.Client, etcd string) (map[string]bool, error) {
	prefix := "/registry/" + monv1.GroupVersion.Group + "/monitors/" + workspaceNS + "/"
	end := prefix[:len(prefix)-1] + string(prefix[len(prefix)-1]+1)
	body, _ := json.Marshal(map[string]any{"key": base64.StdEncoding.EncodeToString([]byte(prefix)),
		"range_end": base64.StdEncoding.EncodeToString([]byte(end)), "keys_only": true})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, etcd+"/v3/kv/range", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("etcd range: %w", err)
	}
	defer resp.Body.Close()
	var out struct {
		KVs []struct {
			Key string `json:"key"`
		} `json:"kvs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("etcd range: %w", err)
	}
	names := map[string]bool{}
	for _, kv := range out.KVs {
		k, err := base64.StdEncoding.DecodeString(kv.Key)
		if err != nil {
			return nil, err
		}
		names[strings.TrimPrefix(string(k), prefix)] = true
	}
	return names, nil
}
