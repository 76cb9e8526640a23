package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

func testAlertRecipients(t *testing.T, s store.Store) {
	c := ctx(t)
	list, err := s.ListAlertRecipients(c, "ns")
	must(t, err)
	eq(t, "nobody asked yet", len(list), 0)

	confirmEvent := func(id string) store.OutboxEvent {
		return store.OutboxEvent{ID: id, Namespace: "ns", Kind: "recipient.confirm", Channels: []string{"recipient:ops@example.com"}}
	}
	rec, err := s.RecordRecipientConfirmation(c, "ns", " Ops@Example.com ", "hash-1", base, confirmEvent("rc-1"))
	must(t, err)
	ds, err := s.ListDeliveries(c, store.DeliveryQuery{EventID: "rc-1"})
	must(t, err)
	eq(t, "confirmation enqueued with the record", len(ds), 1)
	eq(t, "address kept lower-case", rec.Email, "ops@example.com")
	eq(t, "pending", rec.Confirmed(), false)
	eq(t, "one sent", rec.ConfirmationsSent, 1)
	eq(t, "sent at", rec.ConfirmationSentAt != nil && rec.ConfirmationSentAt.Equal(base), true)

	// A resend replaces the token: the old link stops working.
	rec, err = s.RecordRecipientConfirmation(c, "ns", "ops@example.com", "hash-2", base.Add(time.Minute))
	must(t, err)
	eq(t, "two sent", rec.ConfirmationsSent, 2)
	eq(t, "token replaced", rec.ConfirmTokenHash, "hash-2")
	if _, err := s.ConfirmAlertRecipient(c, "hash-1", base, base.Add(2*time.Minute)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("confirm with a replaced token: got %v, want ErrNotFound", err)
	}
	// Links sent before sentAfter have expired.
	if _, err := s.ConfirmAlertRecipient(c, "hash-2", base.Add(time.Hour), base.Add(2*time.Minute)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("confirm with an expired token: got %v, want ErrNotFound", err)
	}
	got, err := s.ConfirmAlertRecipient(c, "hash-2", base, base.Add(2*time.Minute))
	must(t, err)
	eq(t, "confirmed", got.Confirmed(), true)
	eq(t, "confirmed namespace", got.Namespace, "ns")
	eq(t, "confirmed email", got.Email, "ops@example.com")
	if _, err := s.ConfirmAlertRecipient(c, "hash-2", base, base.Add(3*time.Minute)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second use of a token: got %v, want ErrNotFound", err)
	}

	// Sending again to a confirmed recipient changes nothing.
	rec, err = s.RecordRecipientConfirmation(c, "ns", "ops@example.com", "hash-3", base.Add(time.Hour), confirmEvent("rc-3"))
	must(t, err)
	ds, err = s.ListDeliveries(c, store.DeliveryQuery{EventID: "rc-3"})
	must(t, err)
	eq(t, "nothing enqueued for a confirmed recipient", len(ds), 0)
	eq(t, "still confirmed", rec.Confirmed(), true)
	eq(t, "count kept", rec.ConfirmationsSent, 2)
	eq(t, "no pending token", rec.ConfirmTokenHash, "")

	_, err = s.RecordRecipientConfirmation(c, "other", "ops@example.com", "hash-4", base)
	must(t, err)
	_, err = s.RecordRecipientConfirmation(c, "ns", "alerts@example.com", "hash-5", base)
	must(t, err)
	list, err = s.ListAlertRecipients(c, "ns")
	must(t, err)
	eq(t, "namespace's recipients", len(list), 2)
	eq(t, "ordered by email", list[0].Email, "alerts@example.com")
	eq(t, "pending first", list[0].Confirmed(), false)
	eq(t, "confirmed second", list[1].Confirmed(), true)
	all, err := s.ListAlertRecipients(c, "")
	must(t, err)
	eq(t, "every namespace's", len(all), 3)
	eq(t, "per namespace", all[0].Namespace+"/"+all[2].Namespace, "ns/other")

	if _, err := s.RecordRecipientConfirmation(c, "ns", "", "hash-6", base); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("recipient without an address: got %v, want ErrInvalid", err)
	}
}
