// Package release packs the built plugin (dist/) into the archive Grafana
// and its plugin catalogue expect, and checks such an archive offline.
//
// The archive is a zip with one top folder named after the plugin id,
// holding plugin.json, module.js (and its source map), README.md,
// CHANGELOG.md, LICENSE, img/, dashboards/ and one backend executable per
// platform, <executable>_<os>_<arch>[.exe], with mode 0755.
//
// Check runs the checks of Grafana's plugin validator
// (github.com/grafana/plugin-validator, pkg/analysis/passes) that need no
// network, plus a few of our own (binary formats, version agreement,
// development leftovers), and reports each one by name.
package release
