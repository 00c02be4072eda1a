package deploytest

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/sim"
)

// forDivisor shortens every shipped alert's `for:` in the test copy of the
// rules (2m → 10s, 5m → 25s, 10m → 50s), so that the alerts fire within
// the test and keep their order: VLLMEngineDown (2m) fires well before
// VLLMPreemptionsSustained (10m) of the same server.
const forDivisor = 12

// The shipped Alertmanager timings are for people (30s group_wait, 5m
// group_interval); the test copy waits 1s and 5s, so a notification
// arrives seconds after its alert fires. Routes, grouping and inhibition
// are the shipped ones.
var amTestTimings = map[string]string{"group_wait: 30s": "group_wait: 1s", "group_interval: 5m": "group_interval: 5s"}

// amTestConfig writes a copy of the shipped Alertmanager config whose
// placeholder receivers post to the test's webhook under prefix (…/pager,
// …/chat: the placeholders' hosts do not resolve, so Alertmanager could not
// deliver to them) and whose timings are amTestTimings'. Each rewrite must
// hit exactly once: a reshaped file fails here instead of silently keeping
// its placeholders.
func amTestConfig(t *testing.T, prefix string) string {
	t.Helper()
	raw, err := os.ReadFile(repoPath(t, alertmanagerFile))
	require.NoError(t, err)
	cfg := string(raw)
	rewrites := map[string]string{
		"http://pager.example.invalid/alertmanager": prefix + "/pager",
		"http://chat.example.invalid/alertmanager":  prefix + "/chat",
	}
	maps.Copy(rewrites, amTestTimings)
	for from, to := range rewrites {
		require.Equal(t, 1, strings.Count(cfg, from), "%s: %q must occur once for the test's rewrite", alertmanagerFile, from)
		cfg = strings.Replace(cfg, from, to, 1)
	}
	path := filepath.Join(t.TempDir(), "alertmanager.yml")
	writeFile(t, path, cfg)
	return path
}

// routingFleet has the servers that stay up: one over capacity (it queues
// past VLLMQueueBacklog's 50, and is the one the test wedges), one healthy
// and one asleep (sleep mode level 1). One model per server, so that the
// per-model SLO alerts of the busy servers cannot be mistaken for the
// healthy ones'.
func routingFleet(seed uint64) sim.Config {
	cfg := quietFleet(seed)
	over, asleep := cfg.Engine, cfg.Engine
	over.MaxNumSeqs = 4
	asleep.SleepLevel = 1
	cfg.Instances = []sim.InstanceConfig{
		{Model: "wedged", RateFactor: 4, Engine: &over},
		{Model: "healthy"},
		{Model: "asleep", Engine: &asleep},
	}
	return cfg
}

// downFleet is the server the test makes unreachable: two engines with
// HotFleet's tiny KV cache at eight times the arrivals, so it preempts
// several requests a second (VLLMPreemptionsSustained) before it goes.
func downFleet(seed uint64) sim.Config {
	cfg := quietFleet(seed)
	tiny := cfg.Engine
	tiny.NumGPUBlocks, tiny.MaxNumSeqs = 96, 32
	cfg.Instances = []sim.InstanceConfig{{Model: "down", RateFactor: 8, Engines: 2, Engine: &tiny}}
	return cfg
}

// quietFleet is the fleettest fleets' workload: short prompts and outputs,
// 3 arrivals a second per engine, no skew.
func quietFleet(seed uint64) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Rate, cfg.Skew = seed, 3, 0
	cfg.Engine.PromptTokens = sim.Dist{Kind: sim.LogNormal, A: 200, B: 0.5}
	cfg.Engine.OutputTokens = sim.Dist{Kind: sim.LogNormal, A: 80, B: 0.5}
	return cfg
}

// alertStack is one Prometheus with the shipped rules and its Alertmanager
// with the shipped routing, whose receivers post to hook under /<kind>/.
type alertStack struct {
	kind promtest.Kind
	prom promServer
	am   *promtest.Alertmanager
	hook *promtest.Webhook
}

func startAlertStack(t *testing.T, k promtest.Kind, hook *promtest.Webhook, rules, targets []string) *alertStack {
	t.Helper()
	am := promtest.StartAlertmanager(t, amTestConfig(t, hook.URL+"/"+k.Name()))
	prom := promtest.Start(t, promtest.Options{Backend: k, Targets: targets, RuleFiles: rules, Alertmanagers: []string{am.Addr}})
	return &alertStack{kind: k, prom: promServer{prom}, am: am, hook: hook}
}

// promAlert is an alert as Prometheus' /api/v1/alerts lists it.
type promAlert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"` // pending, firing
	Value  string            `json:"value"` // the expression's value at the last evaluation
}

// promAlert returns Prometheus' alert name for instance, if it has one.
func (s *alertStack) promAlert(t *testing.T, name, instance string) (promAlert, bool) {
	t.Helper()
	var data struct {
		Alerts []promAlert `json:"alerts"`
	}
	s.prom.get(t, "/api/v1/alerts", &data)
	for _, a := range data.Alerts {
		if a.Labels["alertname"] == name && a.Labels["instance"] == instance {
			return a, true
		}
	}
	return promAlert{}, false
}

// waitPromState waits until Prometheus has alert name for instance in state.
func (s *alertStack) waitPromState(t *testing.T, name, instance, state string, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, func() string {
		if a, ok := s.promAlert(t, name, instance); ok && a.State == state {
			return ""
		}
		return fmt.Sprintf("%s: %s for %s is not %s", s.kind, name, instance, state)
	})
}

// preemptionMargin is the preemption rate (per second) the down server
// must reach before it goes: 2.5 times VLLMPreemptionsSustained's 0.1/s.
const preemptionMargin = 0.25

// waitPromValue waits until Prometheus' alert name for instance is pending
// or firing with a value of at least `least`. An alert that stops being listed
// meanwhile fails the test at once (its expression fell under its
// threshold, and the test's premise with it).
func (s *alertStack) waitPromValue(t *testing.T, name, instance string, least float64, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, func() string {
		a, ok := s.promAlert(t, name, instance)
		if !ok {
			t.Fatalf("%s: %s for %s left pending before its value reached %g", s.kind, name, instance, least)
		}
		v, err := strconv.ParseFloat(a.Value, 64)
		require.NoError(t, err, "%s: %s value %q", s.kind, name, a.Value)
		if v >= least {
			return ""
		}
		return fmt.Sprintf("%s: %s for %s is %g, not yet %g", s.kind, name, instance, v, least)
	})
}

// notified returns the firing notifications to receiver (pager, chat) that
// carry alert name for instance, and each one's summary.
func (s *alertStack) notified(receiver, name, instance string) []string {
	var out []string
	for _, n := range s.hook.Notifications("/" + s.kind.Name() + "/" + receiver) {
		for _, a := range n.Alerts {
			if a.Status == "firing" && a.Labels["alertname"] == name && a.Labels["instance"] == instance {
				out = append(out, a.Annotations["summary"])
			}
		}
	}
	return out
}

// waitNotified waits for a firing notification of name for instance at
// receiver and returns its alerts' summary.
func (s *alertStack) waitNotified(t *testing.T, receiver, name, instance string, timeout time.Duration) string {
	t.Helper()
	eventually(t, timeout, func() string {
		if len(s.notified(receiver, name, instance)) > 0 {
			return ""
		}
		return fmt.Sprintf("%s: no %s notification for %s at %s yet", s.kind, name, instance, receiver)
	})
	return s.notified(receiver, name, instance)[0]
}

// amAlert returns Alertmanager's alert name for instance, if it holds one.
func (s *alertStack) amAlert(t *testing.T, name, instance string) (promtest.AMAlert, bool) {
	t.Helper()
	for _, a := range s.am.Alerts(t) {
		if a.Labels["alertname"] == name && a.Labels["instance"] == instance {
			return a, true
		}
	}
	return promtest.AMAlert{}, false
}

// alertKinds are the Prometheus servers the routing test runs: Debian's 2.42
// and 3.x send alerts to Alertmanager's API v2 alike, but each renders the
// annotations itself.
var alertKinds = []promtest.Kind{promtest.Prometheus2, promtest.Prometheus3}

// TestAlertmanagerRouting runs the shipped rules (every
// deploy/prometheus/rules/*.rules.yml, `for:` divided by forDivisor) on
// Prometheus 2 and 3 against a simulated fleet, each sending to Debian's
// Alertmanager with deploy/alertmanager/alertmanager.yml (receivers pointed
// at a local webhook, see amTestConfig), and checks what reaches the
// receivers: a server made unreachable pages as VLLMEngineDown, and its
// preemption warning, which starts firing while it is down, is inhibited
// (Alertmanager holds it muted by the down alert, the chat never gets
// it); a wedged engine pages as VLLMEngineStalled; the over-capacity
// server's queue backlog reaches the chat; the healthy and the sleeping
// server produce no notification at all.
//
// The stall alert reads three minutes of flat counters ([3m] windows,
// unchanged), so the test takes about four minutes.
func TestAlertmanagerRouting(t *testing.T) {
	t.Parallel()
	hook := promtest.StartWebhook(t)
	up := fleettest.Run(t, routingFleet(35))
	down := fleettest.Run(t, downFleet(36))
	rules := promtest.ShippedRuleFiles(t, time.Second, forDivisor)
	targets := append(up.Targets(), down.Targets()...)
	var stacks []*alertStack
	for _, k := range alertKinds {
		stacks = append(stacks, startAlertStack(t, k, hook, rules, targets))
	}
	wedged, healthy, asleep, gone := targets[0], targets[1], targets[2], targets[3]
	for _, s := range stacks {
		s.prom.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 3`, 5, 60*time.Second)
	}
	// The engine hangs after it has served: its counters moved in the
	// stall window until now, as in production.
	require.NoError(t, up.Fleet.Wedge(0))
	wedgedAt := time.Now()

	// Down while its preemption warning is pending, so that the warning
	// starts firing only after VLLMEngineDown does; and only once its 5m
	// rate is well over the alert's 0.1/s, because the rate freezes when
	// the server goes (no new samples) and loses the extrapolation to the
	// window's end: closed at the first pending evaluation, the rate could
	// sit a hair over 0.1 and drop under it, resetting the alert (a CI run
	// failed so, with the warning never firing on Prometheus 2).
	for _, s := range stacks {
		s.waitPromState(t, "VLLMPreemptionsSustained", gone, "pending", 90*time.Second)
	}
	for _, s := range stacks {
		s.waitPromValue(t, "VLLMPreemptionsSustained", gone, preemptionMargin, 25*time.Second)
	}
	require.NoError(t, down.Fleet.Close())
	for _, s := range stacks {
		t.Run(s.kind.Name()+"/down server pages, its warnings are muted", func(t *testing.T) {
			checkDownInhibits(t, s, gone)
		})
	}
	for _, s := range stacks {
		t.Run(s.kind.Name()+"/queue backlog reaches the chat", func(t *testing.T) {
			summary := s.waitNotified(t, "chat", "VLLMQueueBacklog", wedged, 90*time.Second)
			require.Equal(t, "vLLM queue backlog on "+wedged+" (wedged)", summary)
			require.Empty(t, s.notified("pager", "VLLMQueueBacklog", wedged), "a warning must not page")
		})
	}
	for _, s := range stacks {
		t.Run(s.kind.Name()+"/wedged engine pages as stalled", func(t *testing.T) {
			summary := s.waitNotified(t, "pager", "VLLMEngineStalled", wedged, time.Until(wedgedAt.Add(5*time.Minute)))
			require.Equal(t, "vLLM server "+wedged+" is stalled (wedged)", summary)
			require.Empty(t, s.notified("chat", "VLLMEngineStalled", wedged), "a critical alert goes to the pager only")
		})
	}
	for _, s := range stacks {
		t.Run(s.kind.Name()+"/healthy servers produce nothing", func(t *testing.T) {
			checkSilent(t, s, healthy, "healthy")
			checkSilent(t, s, asleep, "asleep")
		})
	}
}

// checkDownInhibits: the unreachable server pages as VLLMEngineDown (its
// summary and description name it and its last model), and its preemption
// warning, which Prometheus fires once it is down, reaches Alertmanager
// routed to the chat but muted by the down alert, so the chat never gets
// it.
func checkDownInhibits(t *testing.T, s *alertStack, gone string) {
	summary := s.waitNotified(t, "pager", "VLLMEngineDown", gone, 60*time.Second)
	require.Equal(t, "vLLM server "+gone+" is down", summary)
	downAlert, ok := s.amAlert(t, "VLLMEngineDown", gone)
	require.True(t, ok)
	require.Contains(t, downAlert.Annotations["description"], "(last model: down)", "the description's query finds the server's model")
	require.Empty(t, s.notified("chat", "VLLMEngineDown", gone), "a critical alert goes to the pager only")

	s.waitPromState(t, "VLLMPreemptionsSustained", gone, "firing", 2*time.Minute)
	eventually(t, 30*time.Second, func() string {
		if _, ok := s.amAlert(t, "VLLMPreemptionsSustained", gone); !ok {
			return "Alertmanager has not received the firing preemption warning"
		}
		return ""
	})
	// group_wait and a group_interval: a notification would be out by now.
	time.Sleep(7 * time.Second)
	assert.Empty(t, s.notified("chat", "VLLMPreemptionsSustained", gone), "the down server's warning reached the chat")
	a, _ := s.amAlert(t, "VLLMPreemptionsSustained", gone)
	require.Equal(t, []string{"chat"}, receiverNames(a), "without the inhibition it would go to the chat")
	require.Equal(t, "suppressed", a.Status.State)
	require.Equal(t, []string{downAlert.Fingerprint}, a.Status.InhibitedBy, "muted by the server's VLLMEngineDown")
}

func receiverNames(a promtest.AMAlert) []string {
	var out []string
	for _, r := range a.Receivers {
		out = append(out, r.Name)
	}
	return out
}

// checkSilent: no notification to any receiver, and no alert Alertmanager
// holds, names the server or its model.
func checkSilent(t *testing.T, s *alertStack, instance, model string) {
	t.Helper()
	for _, receiver := range []string{"pager", "chat"} {
		for _, n := range s.hook.Notifications("/" + s.kind.Name() + "/" + receiver) {
			for _, a := range n.Alerts {
				require.False(t, a.Labels["instance"] == instance || a.Labels["model_name"] == model,
					"%s got %s for the %s server: %v", receiver, a.Labels["alertname"], model, a.Labels)
			}
		}
	}
	for _, a := range s.am.Alerts(t) {
		require.False(t, a.Labels["instance"] == instance || a.Labels["model_name"] == model,
			"Alertmanager holds %s for the %s server: %v", a.Labels["alertname"], model, a.Labels)
	}
}
