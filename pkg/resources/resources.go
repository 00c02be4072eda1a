// Package resources serves the editor's resource routes: lists of models,
// instances, engines, clusters and namespaces for filters and dashboard
// variables. Only these
// allow-listed paths exist; nothing is proxied to Prometheus as-is.
package resources

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/failure"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// Lookback is how far back label values are searched: an instance that has
// not reported for an hour is not worth offering in a picker.
const Lookback = time.Hour

// Prometheus is what the routes need from the client.
type Prometheus interface {
	LabelValues(ctx context.Context, label, selector string, start, end time.Time) ([]string, error)
	Query(ctx context.Context, expr string, ts time.Time) (model.Vector, []string, error)
}

// Handler serves the routes for one data source.
type Handler struct {
	Prom     Prometheus
	Settings models.Settings
	Now      func() time.Time
	// Detect, when set, is the data source's cached detection (the
	// queries' own): asked only where labels may come from target_info (an
	// OTLP-fed store), so the lists join them like the queries do.
	Detect func(context.Context) vllm.Detection
}

// builder is the data source's builder, with its detection where the
// settings need labels beyond the instance (vllm.Builder.Probes).
func (h *Handler) builder(ctx context.Context) vllm.Builder {
	b := vllm.ForSettings(h.Settings)
	if h.Detect != nil && b.Probes() {
		b.Detected = h.Detect(ctx)
	}
	return b
}

// Mux returns the allow-listed routes.
func (h *Handler) Mux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/models", h.list(func(models.Settings) string { return "model_name" }))
	mux.HandleFunc("/instances", h.instances)
	mux.HandleFunc("/engines", h.list(func(models.Settings) string { return "engine" }))
	// The scoping labels of a shared store, for dashboards' cluster and
	// namespace variables; an empty list where the fleet has no such label.
	mux.HandleFunc("/clusters", h.list(func(models.Settings) string { return "cluster" }))
	mux.HandleFunc("/namespaces", h.list(func(models.Settings) string { return "namespace" }))
	return mux
}

// list answers GET with the sorted values of one label among vLLM engines,
// narrowed by repeated model= and instance= parameters.
func (h *Handler) list(label func(models.Settings) string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "only GET is allowed"})
			return
		}
		f := filters(r)
		b := h.builder(r.Context())
		if b.Joining() {
			h.joinedValues(w, r, b, label(h.Settings), f)
			return
		}
		sel := b.EngineSelector(f)
		now := h.Now()
		vals, err := h.Prom.LabelValues(r.Context(), label(h.Settings), sel, now.Add(-Lookback), now)
		if err != nil {
			writeError(w, r, err)
			return
		}
		sort.Strings(vals)
		if vals == nil {
			vals = []string{}
		}
		writeJSON(w, http.StatusOK, vals)
	}
}

// joinedValues answers a list where labels come from target_info: the
// values a query of the engines, joined, returns over the lookback.
func (h *Handler) joinedValues(w http.ResponseWriter, r *http.Request, b vllm.Builder, label string, f models.Filters) {
	vec, _, err := h.Prom.Query(r.Context(), b.RecentValues(label, f, "1h"), h.Now())
	if err != nil {
		writeError(w, r, err)
		return
	}
	vals := []string{}
	for _, s := range vec {
		if v := string(s.Metric[model.LabelName(label)]); v != "" {
			vals = append(vals, v)
		}
	}
	sort.Strings(vals)
	writeJSON(w, http.StatusOK, vals)
}

func filters(r *http.Request) models.Filters {
	return models.Filters{Models: nonEmpty(r.URL.Query()["model"]), Instances: nonEmpty(r.URL.Query()["instance"])}
}

// instances lists servers: the instance label's values, or, where the
// identity is several labels (namespace+pod), their values joined by "/".
func (h *Handler) instances(w http.ResponseWriter, r *http.Request) {
	b := h.builder(r.Context())
	if len(b.IdentityLabels()) == 1 {
		h.list(func(models.Settings) string { return b.IdentityLabels()[0] })(w, r)
		return
	}
	if r.Method != http.MethodGet {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "only GET is allowed"})
		return
	}
	vec, _, err := h.Prom.Query(r.Context(), b.RecentIdentities(filters(r), "1h"), h.Now())
	if err != nil {
		writeError(w, r, err)
		return
	}
	vals := []string{}
	for _, s := range vec {
		ls := make(map[string]string, len(s.Metric))
		for k, v := range s.Metric {
			ls[string(k)] = string(v)
		}
		vals = append(vals, b.InstanceOf(ls))
	}
	sort.Strings(vals)
	writeJSON(w, http.StatusOK, vals)
}

func nonEmpty(vs []string) []string {
	var out []string
	for _, v := range vs {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// writeError answers a failed lookup with the status of the one error map
// (pkg/failure) and records its error source for the SDK.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	c := failure.Classify(err)
	c.Record(r.Context())
	writeJSON(w, c.HTTPStatus(), map[string]string{"error": err.Error()})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
