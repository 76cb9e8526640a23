// Package assign builds the probe API's assignments from Monitors: one
// Monitor becomes one probeapi.Assignment (identity, effective interval,
// timeout and regions from package monitor, the config struct of its type
// from monitorconfig.Only) with header values read from Secrets, and a region's
// list is every active monitor that runs there, with a revision digest
// agents long-poll on. Secrets are read through a short-lived cache so a
// recomputation costs one read per Secret, not one per header.
//
// It judges nothing and serves nothing: the probe API server asks it for a
// region's list, and the engine for the one assignment of an ad-hoc check.
package assign
