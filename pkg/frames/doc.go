// Package frames turns typed Prometheus results and the plugin's own
// domain results (preemption events, top-k rankings) into Grafana data
// frames. It is the only package that builds frames.
package frames
