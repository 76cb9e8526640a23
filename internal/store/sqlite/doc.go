// Package sqlite is the embedded store backend, the default: one database file
// through the pure-Go modernc.org/sqlite driver in WAL mode, with a bounded WAL
// (journal_size_limit), synchronous=NORMAL, foreign keys and a busy timeout.
//
// All writes go through a single writer goroutine that commits every write
// queued at that moment in one transaction (group commit), which is what makes
// SQLite ingest tens of thousands of checks per second; reads use a separate
// pool of read-only connections. Schema migrations are embedded SQL files
// applied at Open and recorded in schema_migrations.
package sqlite
