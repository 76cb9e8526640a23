package postgres_test

import (
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/store/storetest"
)

func TestUptimeWindows(t *testing.T) { storetest.UptimeWindows(t, newStore(t)) }
