package alerting

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/conditions"
	"github.com/uptime-operator/uptime-operator/internal/ssa"
)

// FailingNoticeAnnotation on an AlertChannel records (RFC 3339) when the
// owner was last emailed that the connection is failing, so the email goes
// out at most once a day per connection across restarts and replicas.
const FailingNoticeAnnotation = "uptime-operator.io/last-failing-notice-at"

// ApplyDelivery records one attempt's result in a channel's status. final
// marks the end of a delivery (success, permanent failure or the last
// attempt): consecutive failures count finished deliveries, as "3
// deliveries in a row fail" says, while lastDeliveryAt and
// lastDeliveryStatus follow every attempt. It reports whether the channel
// has just become Failing.
func ApplyDelivery(st *monv1.AlertChannelStatus, generation int64, at time.Time, ok, final bool, result string) bool {
	t := metav1Time(at)
	st.LastDeliveryAt = &t
	st.LastDeliveryStatus = result
	switch {
	case ok:
		st.ConsecutiveFailures = 0
		conditions.Set(&st.Conditions, generation, monv1.AlertChannelConditionFailing, false,
			monv1.ReasonDeliveriesSucceeding, "the last delivery succeeded")
	case final:
		st.ConsecutiveFailures++
		if st.ConsecutiveFailures >= alertevent.FailingThreshold {
			was := conditions.IsTrue(st.Conditions, monv1.AlertChannelConditionFailing)
			conditions.Set(&st.Conditions, generation, monv1.AlertChannelConditionFailing, true,
				monv1.ReasonDeliveriesFailing, fmt.Sprintf("%d deliveries in a row failed; last result: %s",
					st.ConsecutiveFailures, result))
			return !was
		}
	}
	return false
}

// deliveryStatus is the part of AlertChannel status the delivery worker
// owns and applies as monv1.DeliveryFieldOwner; the AlertChannel
// controller applies the rest as a field manager of its own.
type deliveryStatus struct {
	ConsecutiveFailures int32        `json:"consecutiveFailures"`
	LastDeliveryAt      *metav1.Time `json:"lastDeliveryAt,omitempty"`
	LastDeliveryStatus  string       `json:"lastDeliveryStatus,omitempty"`
	// Conditions holds the Failing condition alone.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// deliveryStatusOf is the worker's part of st.
func deliveryStatusOf(st *monv1.AlertChannelStatus) deliveryStatus {
	out := deliveryStatus{ConsecutiveFailures: st.ConsecutiveFailures, LastDeliveryAt: st.LastDeliveryAt, LastDeliveryStatus: st.LastDeliveryStatus}
	if c := meta.FindStatusCondition(st.Conditions, monv1.AlertChannelConditionFailing); c != nil {
		out.Conditions = []metav1.Condition{*c}
	}
	return out
}

// recordOutcome applies the channel's delivery status (server-side apply
// of the worker's fields, locked to the version read and retried on
// conflict, so that concurrent workers count every failure) and sends the
// owner notice when the channel just became Failing.
func (w *Worker) recordOutcome(ctx context.Context, ch *monv1.AlertChannel, at time.Time, ok, final bool, result string) error {
	var became bool
	var cur monv1.AlertChannel
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if err := w.Reader.Get(ctx, client.ObjectKeyFromObject(ch), &cur); err != nil {
			return err
		}
		if cur.UID != ch.UID {
			return apierrors.NewNotFound(monv1.GroupVersion.WithResource("alertchannels").GroupResource(), ch.Name)
		}
		became = ApplyDelivery(&cur.Status, cur.Generation, at, ok, final, result)
		return ssa.ApplyStatus(ctx, w.Client, &cur, monv1.GroupVersion.WithKind("AlertChannel"), deliveryStatusOf(&cur.Status),
			ssa.Options{Owner: monv1.DeliveryFieldOwner, Locked: true})
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("patch status of alert channel %s: %w", ch.Name, err)
	}
	// The caller's copy serves the rest of its batch (see statusCurrent).
	recovered := ok && conditions.IsTrue(ch.Status.Conditions, monv1.AlertChannelConditionFailing)
	ch.Status = *cur.Status.DeepCopy()
	if w.Recorder != nil {
		switch {
		case became:
			w.Recorder.Event(&cur, corev1.EventTypeWarning, monv1.ReasonDeliveriesFailing,
				fmt.Sprintf("%d deliveries in a row failed; last result: %s", cur.Status.ConsecutiveFailures, result))
		case recovered:
			w.Recorder.Event(&cur, corev1.EventTypeNormal, monv1.ReasonDeliveriesSucceeding, "a delivery succeeded; the channel is no longer failing")
		}
	}
	if became {
		return w.noticeFailing(ctx, &cur)
	}
	return nil
}

// noticeFailing tells the owner that ch is failing, at most once a day per
// connection. The annotation is written first with an optimistic lock, so
// of several replicas only one sends.
func (w *Worker) noticeFailing(ctx context.Context, ch *monv1.AlertChannel) error {
	log := ctrl.LoggerFrom(ctx)
	now := w.Clock.Now()
	if last, err := time.Parse(time.RFC3339, ch.Annotations[FailingNoticeAnnotation]); err == nil && now.Sub(last) < alertevent.FailingNoticeInterval {
		return nil
	}
	before := ch.DeepCopy()
	if ch.Annotations == nil {
		ch.Annotations = map[string]string{}
	}
	ch.Annotations[FailingNoticeAnnotation] = now.UTC().Format(time.RFC3339)
	if err := w.Client.Patch(ctx, ch, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}),
		client.FieldOwner(monv1.FieldOwner)); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil // another replica is handling it, or the channel is gone
		}
		// Admission may refuse the update (say, the endpoint no longer
		// resolves): tell the owner anyway rather than not at all.
		log.Error(err, "unable to record failing notice; notifying anyway", "name", ch.Name)
	}
	subject := fmt.Sprintf("Alert connection %q is failing", displayName(ch))
	text := fmt.Sprintf("%d deliveries in a row to the %s connection %q in workspace %s failed (last result: %s).\n"+
		"The connection stays enabled and keeps receiving events; fix the endpoint or edit the connection.",
		ch.Status.ConsecutiveFailures, ch.Spec.Type, displayName(ch), ch.Namespace, ch.Status.LastDeliveryStatus)
	if w.OwnerEmail == "" || ((w.SMTP == nil || w.SMTP.Addr == "") && w.Endpoints.Email == "") {
		log.Info("alert channel is failing; no owner email is configured", "name", ch.Name, "namespace", ch.Namespace,
			"consecutiveFailures", ch.Status.ConsecutiveFailures)
		return nil
	}
	out, err := w.builder().email(MailMessage{To: []string{w.OwnerEmail}, Subject: subject, Text: text})
	if err != nil {
		return fmt.Errorf("email owner about failing alert channel %s: %w", ch.Name, err)
	}
	actx, cancel := context.WithTimeout(ctx, w.AttemptTimeout)
	defer cancel()
	if res := sendAll(actx, w.hc, w.SMTP, out); res.outcome != alertevent.Delivered {
		return fmt.Errorf("email owner about failing alert channel %s: %s", ch.Name, resultText(res))
	}
	return nil
}

func metav1Time(t time.Time) metav1.Time { return metav1.NewTime(t.UTC().Truncate(time.Second)) }

func displayName(ch *monv1.AlertChannel) string {
	if ch.Spec.Name != "" {
		return ch.Spec.Name
	}
	return ch.Name
}
