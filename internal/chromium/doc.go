// Package chromium starts headless Chromium the one way the project does:
// where the binary is found, the flags it needs to run unattended in a
// container or CI (no sandbox, no GPU, no background traffic, a fresh
// profile), and the guarded loopback proxy every connection of the browser
// goes through. The website-health audit and the browser check both use it.
package chromium
