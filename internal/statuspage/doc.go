// Package statuspage serves published StatusPages to the public: the JSON
// document, the daily history, the badge, the Atom feed and the server-rendered
// HTML page, with the password sessions of private pages (and their
// failed-sign-in limits) and custom-domain routing; and the pages' subscribers (Notifier): the
// subscribe, confirm and unsubscribe endpoints and the notifications of public
// incident updates and maintenance sent to them.
//
// Configuration comes from the StatusPage, Monitor and MaintenanceWindow custom
// resources (read through the manager's cache); history comes from the store.
// Nothing a page serves names a monitor's target, host, region or error: a
// status page is public. The 60 requests a minute per client address are
// counted by the REST core in front of it (internal/apiserver), with every
// other rate limit.
package statuspage
