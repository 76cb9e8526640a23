// Package sitehealth checks whole websites: the website health feature of
// the REST specification.
//
// A run crawls one site breadth-first from its URL, staying on the site's
// registrable domain (or, for IP literals and single-label hosts, on the
// exact host and port), down to max_depth links and at most max_pages
// requests to the site, honouring robots.txt (the groups for
// "uptime-operator" or else "*", with Allow and Disallow, longest match
// wins). At most four requests run at once, each with its own timeout,
// reading at most 2 MiB of a body; every connection, each redirect hop
// included, is dialled through the netguard address guard. The crawl
// reports broken links (internal, and external ones when asked, by HEAD
// with a GET fallback), mixed content (http:// images, scripts, style
// sheets and frames on https pages), redirect chains of more than one hop
// and pages slower than three seconds, and scores the site from them.
//
// A run can also audit up to three URLs in headless Chromium over the
// DevTools protocol: navigation timing (TTFB, FCP, LCP, CLS, bytes,
// requests) scored for performance, and simple accessibility, best-practice
// and SEO checks. The browser's traffic goes through a loopback proxy that
// dials through the same address guard. Without a Chromium binary the audit
// reports itself unavailable and the crawl still runs.
//
// The Service stores sites and runs, runs crawls on demand and, as a
// leader-only Runnable, on their daily or weekly schedule, and after each
// run of a site with notifications on enqueues a site_health.issues event
// for every webhook connection when the run found errors the previous run
// did not have, an audit score dropped by the site's threshold, or the
// crawl failed.
package sitehealth
