package controllers

import (
	"strconv"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/types"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// announcementSpace namespaces the ids of announcements (name-based UUIDs,
// RFC 9562 version 5).
var announcementSpace = uuid.MustParse("5b0f4f3e-6a1d-4c55-9b7e-2f8d0c1e7a90")

// announcementID is the outbox event id of an announcement: object uid
// announced kind for the state it describes. A reconcile retried because its
// status patch failed announces the same state again and gets the same id,
// and the store skips an id it already holds, so the announcement is sent
// once. The next episode is another state and so another id.
func announcementID(uid types.UID, kind, state string) string {
	return uuid.NewSHA1(announcementSpace, []byte(string(uid)+"\x00"+kind+"\x00"+state)).String()
}

// stampAnnouncement gives events the ids of one announcement (the n-th
// event of it gets the suffix n, should a producer return several).
func stampAnnouncement(events []store.OutboxEvent, uid types.UID, kind, state string) {
	for i := range events {
		id := state
		if i > 0 {
			id += "\x00" + strconv.Itoa(i)
		}
		events[i].ID = announcementID(uid, kind, id)
	}
}
