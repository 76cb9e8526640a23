// Package core is the thin REST core that every resource package of the
// API builds on: the Router (authentication of both front doors, access
// levels, plan features, the rate limits of the specification's Limits
// table, body limits, CORS, and the table of declared routes the OpenAPI
// document is built from: core.Doc), the error shapes and codes, the JSON body
// decoding, and Deps, the read-your-writes access to custom resources.
//
// Resource packages (internal/apiserver/<resource>) import core; core never
// imports them. Only internal/apiserver, which assembles the routes,
// imports both.
package core
