// Package health answers Grafana's "Save & test": it proves that Prometheus
// is reachable, names it, and proves that vLLM series are there, with a
// message an operator can act on when something is missing.
package health

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/failure"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// Prometheus is what the health check needs from the client.
type Prometheus interface {
	Host() string
	BuildInfo(ctx context.Context) (v1.BuildinfoResult, error)
	MetricNames(ctx context.Context, selector string, start, end time.Time) ([]string, error)
	Query(ctx context.Context, expr string, ts time.Time) (model.Vector, []string, error)
}

// lookback bounds the name search so a health check on a huge TSDB stays cheap
// while still finding a fleet that scraped recently.
const lookback = time.Hour

// Check runs the health check at time now.
func Check(ctx context.Context, p Prometheus, s models.Settings, now time.Time) *backend.CheckHealthResult {
	server, err := identify(ctx, p)
	if err != nil {
		return failedBy(ctx, err, unreachableMessage(p.Host(), err))
	}
	pb := probe(ctx, p, s, now)
	names, err := p.MetricNames(ctx, pb.NameSelector(), now.Add(-lookback), now)
	if err != nil {
		return failedBy(ctx, err, fmt.Sprintf("%s answered, but listing metric names failed: %v", server, err))
	}
	det := pb.Detected.WithNames(names, pb.PrefixList())
	ctx = withDetection(ctx, det)
	// The stack is advice: a failed lookup leaves it out, never fails health.
	st, _ := detectStack(ctx, p, s, now)
	if !det.Found() {
		return failed(noVLLMMessage(server, s) + st.note(s))
	}
	fl, vec, err := countFleet(ctx, p, s, now)
	if b := builder(ctx, s); b.JoinConflict(err) {
		err = fmt.Errorf("%w (%s)", err, b.JoinConflictText())
	}
	if err != nil {
		return failedBy(ctx, err, fmt.Sprintf("%s has vLLM metric names, but counting engines failed: %v", server, err))
	}
	h, err := recentFleet(ctx, p, s, vec, now)
	if err != nil {
		return failedBy(ctx, err, fmt.Sprintf("%s has vLLM metric names, but counting the engines of the last %s failed: %v", server, lookback, err))
	}
	gen := generationFor(det, fl)
	if fl.engines == 0 {
		// Grafana has no warning status: anything but OK shows as a failed
		// test, which is what a fleet that stopped reporting deserves.
		return &backend.CheckHealthResult{Status: backend.HealthStatusError,
			Message: goneMessage(server, s, h, now) + st.note(s), JSONDetails: details(gen, det, fl, h, st, stalls{})}
	}
	sl := checkStalls(ctx, p, s, now)
	return &backend.CheckHealthResult{
		Status: sl.status(fl),
		Message: fmt.Sprintf("%s: vLLM %s metrics found: %s%s%s%s%s%s%s%s%s%s", server, gen, fl.summary(), sl.note(fl), rejectNote(ctx, p, s, det, now),
			missingNote(h, now), scrapeNote(ctx, p, s, now), scrapeHealthNote(ctx, p, s, now), otlpNote(ctx, p, s, det, now), scopeNote(s), st.note(s), rulesNote(ctx, p, s, now)),
		JSONDetails: details(gen, det, fl, h, st, sl),
	}
}

// identify names the server from buildinfo. A 404 is normal for compatible
// servers (older Thanos, VictoriaMetrics), so only reachability errors fail.
func identify(ctx context.Context, p Prometheus) (string, error) {
	bi, err := p.BuildInfo(ctx)
	switch {
	case err == nil && strings.HasPrefix(bi.Version, "0."):
		// Prometheus has had buildinfo since 2.14; a 0.x version there is
		// Thanos Query, which answers with its own version.
		return "Thanos " + bi.Version, nil
	case err == nil && bi.Version != "":
		return "Prometheus " + bi.Version, nil
	case err == nil, answeredWithout(err):
		return "Prometheus-compatible server at " + p.Host(), nil
	default:
		return "", err
	}
}

// builder writes the health check's selectors inside the data source's
// scope, with what detection found once Check has it (withDetection): the
// names to read and the labels to join from target_info.
func builder(ctx context.Context, s models.Settings) vllm.Builder {
	b := vllm.ForSettings(s)
	if d, ok := ctx.Value(detectionKey{}).(vllm.Detection); ok {
		b.Detected = d
	}
	return b
}

// scopeNote says that the counts are of the selector's series only, so a
// shared store's other fleets are not mistaken for missing engines.
func scopeNote(s models.Settings) string {
	if len(s.Selector) == 0 {
		return ""
	}
	return fmt.Sprintf(" (only series matching the data source selector {%s} are counted)", models.MatchersString(s.Selector))
}

func failed(msg string) *backend.CheckHealthResult {
	return &backend.CheckHealthResult{Status: backend.HealthStatusError, Message: msg}
}

// failedBy is failed for a call that failed: the one error map
// (pkg/failure) records who must act for the SDK's logs and metrics.
func failedBy(ctx context.Context, err error, msg string) *backend.CheckHealthResult {
	failure.Classify(err).Record(ctx)
	return failed(msg)
}

// answeredWithout is true for a buildinfo failure that proves the server
// answered: it rejected the request, failed inside, or answered with
// something other than buildinfo.
func answeredWithout(err error) bool {
	switch failure.Classify(err).Kind {
	case failure.BadQuery, failure.Server, failure.BadResponse:
		return true
	}
	return false
}

// unreachableMessage tells auth failures apart from network ones.
func unreachableMessage(host string, err error) string {
	switch failure.Classify(err).Kind {
	case failure.Unauthorized:
		return fmt.Sprintf("Prometheus at %s rejected the credentials (%v). Check basic auth, custom headers (e.g. Authorization: Bearer …) and TLS client settings.", host, err)
	case failure.Timeout:
		return fmt.Sprintf("Prometheus at %s did not answer within the query timeout (%v). Check the URL, network path, or raise the query timeout.", host, err)
	default:
		return fmt.Sprintf("Prometheus at %s is unreachable (%v). Check the URL and that the Grafana server can reach it.", host, err)
	}
}

// noVLLMMessage lists what to check when Prometheus has no vLLM series.
func noVLLMMessage(server string, s models.Settings) string {
	return fmt.Sprintf("%s is reachable but has no vLLM series (no metric name starts with %q in the last %s). Check: "+
		"1) the scrape config has a job for every vLLM server's /metrics endpoint and its targets are up; "+
		"2) the metric prefix setting matches your deployment (e.g. ray_vllm: on Ray Serve); "+
		"3) vLLM was not started with --disable-log-stats, which turns its metrics off.%s", server, s.MetricPrefix, lookback, selectorHint(s))
}

// selectorHint adds the scope to the checklist when one is set.
func selectorHint(s models.Settings) string {
	if len(s.Selector) == 0 {
		return ""
	}
	return fmt.Sprintf(" 4) the data source selector {%s} matches the fleet's series (only series it matches are searched).", models.MatchersString(s.Selector))
}

// generationFor settles an unknown generation with the engine label: only V1
// engines carry it.
func generationFor(det vllm.Detection, fl fleet) vllm.Generation {
	if det.Generation != vllm.GenUnknown {
		return det.Generation
	}
	if fl.withEngineLabel > 0 {
		return vllm.GenV1
	}
	return vllm.GenV0
}

func details(gen vllm.Generation, det vllm.Detection, fl fleet, h history, st stack, sl stalls) []byte {
	last := ""
	if !h.lastSeen.IsZero() {
		last = h.lastSeen.UTC().Format(time.RFC3339)
	}
	return fmt.Appendf(nil, `{"generation":%q,"engines":%d,"instances":%d,"models":%d,"metricNames":%d,"enginesInLookback":%d,"missingEngines":%d,"lastSeen":%q,"stack":%q,"suggestedProfile":%q,"stalledEngines":%d,"sleepingEngines":%d}`,
		string(gen), fl.engines, fl.instances, fl.models, len(det.Names), h.seen.engines, h.missing, last, st.name, st.profile, len(sl.stalled), sl.sleeping)
}
