package models

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseMatchers(t *testing.T) {
	tests := []struct {
		name, raw string
		want      string // rendered back; "" with wantErr
		wantErr   string
	}{
		{name: "empty", raw: "  "},
		{name: "empty braces", raw: "{}"},
		{name: "one", raw: `cluster="eu-1"`, want: `cluster="eu-1"`},
		{name: "braces and spaces", raw: ` { cluster = "eu-1" , namespace=~"inference|batch" } `, want: `cluster="eu-1", namespace=~"inference|batch"`},
		{name: "empty value selects series without the label", raw: `cluster=""`, want: `cluster=""`},
		{name: "quotes and backslashes stay literal", raw: `team="a\"b\\c"`, want: `team="a\"b\\c"`},
		{name: "single quotes", raw: `team='x"y'`, want: `team="x\"y"`},
		{name: "backticks", raw: "team=`a\\b`", want: `team="a\\b"`},
		{name: "regex characters in =", raw: `pod="vllm-.*"`, want: `pod="vllm-.*"`},
		{name: "negative regex", raw: `namespace!~"kube-.*"`, want: `namespace!~"kube-.*"`},
		{name: "trailing comma", raw: `cluster="eu-1",`, want: `cluster="eu-1"`},
		{name: "quoted UTF-8 label name", raw: `"k8s.cluster"="eu-1"`, want: `"k8s.cluster"="eu-1"`},
		{name: "injection: closing brace", raw: `cluster="eu-1"} or vector(1) or {a="b"`, wantErr: "selector"},
		{name: "injection: second selector", raw: `cluster="eu-1"}, {a="b"`, wantErr: "selector"},
		{name: "a whole expression", raw: `sum(up)`, wantErr: "selector"},
		{name: "metric name", raw: `__name__="up"`, wantErr: "may not match the metric name"},
		{name: "metric name regex", raw: `__name__=~"vllm:.*"`, wantErr: "may not match the metric name"},
		{name: "bad regex", raw: `pod=~"("`, wantErr: "selector"},
		{name: "unquoted value", raw: `cluster=eu-1`, wantErr: "selector"},
		{name: "no operator", raw: `cluster`, wantErr: "selector"},
		{name: "reserved", raw: `__vllm_scope_check__="1"`, wantErr: "reserved"},
		{name: "not UTF-8", raw: "cluster=\"\xff\"", wantErr: "UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := ParseMatchers("selector", tt.raw)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrInvalidMatchers)
				require.ErrorContains(t, err, tt.wantErr)
				require.ErrorContains(t, err, "selector")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, MatchersString(ms))
		})
	}
}

func TestSettingsSelector(t *testing.T) {
	s, err := fromJSON("http://prom:9090", jsonSettings{Selector: `cluster="eu-1", namespace="inference"`})
	require.NoError(t, err)
	require.Equal(t, `cluster="eu-1", namespace="inference"`, MatchersString(s.Selector))

	_, err = fromJSON("http://prom:9090", jsonSettings{Selector: `cluster="eu-1"} or {`})
	require.ErrorIs(t, err, ErrInvalidSettings)
	require.ErrorContains(t, err, "selector")
}
