package core

import (
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// CheckRecord is a check result as responses show it.
func CheckRecord(c store.Check) restapi.Check {
	return restapi.Check{ID: c.ID, CheckedAt: ISOTime(c.CheckedAt), Region: c.Region, Status: string(c.Status),
		StatusCode: c.StatusCode, ResponseTimeMs: c.ResponseTimeMs, ErrorType: StrPtr(c.ErrorType), ErrorMessage: StrPtr(c.ErrorMessage)}
}

// CheckRecords are check results as responses show them.
func CheckRecords(cs []store.Check) []restapi.Check {
	out := make([]restapi.Check, 0, len(cs))
	for _, c := range cs {
		out = append(out, CheckRecord(c))
	}
	return out
}
