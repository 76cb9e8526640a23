// Package thirdpartystatus serves /third-party-status: the catalog of
// third-party status pages (internal/thirdparty), a workspace's
// subscriptions to them and the providers shown on its status pages.
package thirdpartystatus
