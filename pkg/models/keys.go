package models

import (
	"reflect"
	"sort"
	"strings"
)

// SecureAgentToken is the secureJsonData key of the node agents' bearer token.
const SecureAgentToken = "agentToken"

// httpJSONKeys are the jsonData keys that Grafana's standard HTTP settings
// editor (DataSourceHttpSettings) writes and Grafana or the SDK's
// HTTPClientOptions read. Custom headers are numbered from 1
// (httpHeaderName1, httpHeaderName2, …); the first stands for all.
var httpJSONKeys = []string{"httpHeaderName1", "keepCookies", "oauthPassThru", "serverName", "timeout",
	"tlsAuth", "tlsAuthWithCACert", "tlsSkipVerify"}

// httpSecureKeys are the secureJsonData keys of the same HTTP settings.
var httpSecureKeys = []string{"basicAuthPassword", "httpHeaderValue1", "tlsCACert", "tlsClientCert", "tlsClientKey"}

// Keys are the setting keys a data source of this type reads, by where
// they live in the data source's settings.
type Keys struct {
	// JSONData are the plain keys (jsonData), sorted.
	JSONData []string
	// SecureJSONData are the encrypted keys (secureJsonData), sorted.
	SecureJSONData []string
}

// SettingKeys lists every jsonData and secureJsonData key the backend reads:
// the json tags of the structs ParseSettings decodes jsonData into, the
// node-agent token, and Grafana's standard HTTP settings. Documentation
// tests compare it with docs/configuration.md, so a new setting cannot stay
// undocumented.
func SettingKeys() Keys {
	var js []string
	for _, v := range []any{jsonSettings{}, jsonAgentSettings{}, jsonSaturation{}, containerJSON{}} {
		js = append(js, jsonTags(reflect.TypeOf(v))...)
	}
	js = append(js, httpJSONKeys...)
	secure := append([]string{SecureAgentToken}, httpSecureKeys...)
	return Keys{JSONData: sortedUnique(js), SecureJSONData: sortedUnique(secure)}
}

// jsonTags returns the JSON names of a struct's fields (the tag's name, or
// the field name when the tag has none), skipping fields tagged "-".
func jsonTags(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
			continue
		case name == "":
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}

// sortedUnique sorts the keys and drops repeats.
func sortedUnique(keys []string) []string {
	sort.Strings(keys)
	out := keys[:0]
	for i, k := range keys {
		if i == 0 || k != keys[i-1] {
			out = append(out, k)
		}
	}
	return out
}
