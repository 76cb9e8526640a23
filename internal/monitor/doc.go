// Package monitor is the monitor domain model: the pure logic over the API
// types that every front door and service shares, so that each rule lives in
// one place.
//
//   - Effective values: the regions, interval and timeout a monitor actually
//     runs with (EffectiveRegions, EffectiveIntervalSeconds,
//     EffectiveTimeoutMs) and its display Target. The Monitor controller
//     writes them into status; the engine reads them back through Regions and
//     IntervalSeconds; REST computes the same values for an object the
//     controller has not reconciled yet.
//   - Region codes (RegionCode, RegionCodes).
//   - Defaulting and validation that need no other object (DefaultMonitor,
//     ValidateMonitorSpec, ValidateMonitorGroupSpec, DefaultSLO,
//     ValidateSLOSpec, NormalizeTags) and the specification's error codes
//     that admission refusals carry. The admission webhooks and the REST API
//     both call them, so both refuse the same input with the same words.
//   - The live state the engine reports (LiveState) and how it becomes
//     Monitor status (ApplyLiveState, CurrentStatus).
//
// It imports the API types and leaf packages only (plans, netguard, probes
// for JSONPath syntax, probeapi for timeouts, monitorconfig for the config
// structs of each type); nothing here imports
// controllers, webhooks or a service.
package monitor
