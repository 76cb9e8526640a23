// Package recipients keeps the alert email recipients of each workspace
// (namespace) and their confirmation state.
//
// Recipients are not accounts: they are the addresses the namespace's
// resources name — monitors' and groups' notificationEmails, email alert
// channels, escalation steps and on-call schedules. Anyone who may edit
// those resources can type any address, so each new address is sent a
// confirmation email with a single-use link, and the REST API reports who
// confirmed. With
// Confirmer.Required (the manager's --require-recipient-confirmation) alert
// emails go only to confirmed addresses; the others are held back, which
// keeps a mistyped or hostile entry from turning the service into a mailer.
//
// Tokens are 256-bit random values; the store keeps their SHA-256 only, a
// resend replaces the pending token, and links expire after TokenTTL.
package recipients
