package plugin

import (
	"encoding/base64"
	"errors"
	"net/http"
	"sort"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// redacted replaces a secret wherever it would leave the plugin.
const redacted = "[redacted]"

// minSecretLen keeps a trivially short value from blanking ordinary text.
const minSecretLen = 4

// redactor removes the instance's secrets (every secureJsonData value, and
// the basic-auth header built from the password) from everything the plugin
// answers. Servers and proxies that quote a request's headers in an error
// body (an agent's 401, a gateway's 502 page) would otherwise hand the
// token back to whoever reads the panel.
type redactor struct{ forms []string }

func newRedactor(s backend.DataSourceInstanceSettings) redactor {
	seen := map[string]bool{}
	add := func(v string) {
		if v = strings.TrimSpace(v); len(v) >= minSecretLen {
			seen[v] = true
		}
	}
	for k, v := range s.DecryptedSecureJSONData {
		add(v)
		for _, line := range strings.Split(v, "\n") { // PEM bodies are quoted line by line
			if !strings.HasPrefix(strings.TrimSpace(line), "-----") {
				add(line)
			}
		}
		if k == "basicAuthPassword" {
			add(base64.StdEncoding.EncodeToString([]byte(s.BasicAuthUser + ":" + v)))
		}
	}
	r := redactor{}
	for v := range seen {
		r.forms = append(r.forms, v)
	}
	// Longest first, so a secret that contains another is removed whole.
	sort.Slice(r.forms, func(i, j int) bool { return len(r.forms[i]) > len(r.forms[j]) })
	return r
}

func (r redactor) string(s string) string {
	for _, f := range r.forms {
		if strings.Contains(s, f) {
			s = strings.ReplaceAll(s, f, redacted)
		}
	}
	return s
}

// response redacts errors, notices and executed queries of every answer.
func (r redactor) response(resp *backend.QueryDataResponse) {
	if len(r.forms) == 0 || resp == nil {
		return
	}
	for ref, dr := range resp.Responses {
		if dr.Error != nil {
			if msg := r.string(dr.Error.Error()); msg != dr.Error.Error() {
				dr.Error = errors.New(msg)
			}
		}
		for _, f := range dr.Frames {
			r.frame(f)
		}
		resp.Responses[ref] = dr
	}
}

func (r redactor) frame(f *data.Frame) {
	if f == nil || f.Meta == nil {
		return
	}
	for i := range f.Meta.Notices {
		f.Meta.Notices[i].Text = r.string(f.Meta.Notices[i].Text)
	}
	f.Meta.ExecutedQueryString = r.string(f.Meta.ExecutedQueryString)
}

func (r redactor) health(res *backend.CheckHealthResult) *backend.CheckHealthResult {
	if res == nil || len(r.forms) == 0 {
		return res
	}
	res.Message = r.string(res.Message)
	res.JSONDetails = []byte(r.string(string(res.JSONDetails)))
	return res
}

// sender redacts resource answers on their way out.
func (r redactor) sender(next backend.CallResourceResponseSender) backend.CallResourceResponseSender {
	if len(r.forms) == 0 {
		return next
	}
	return backend.CallResourceResponseSenderFunc(func(res *backend.CallResourceResponse) error {
		if res != nil {
			res.Body = []byte(r.string(string(res.Body)))
			for k, vs := range res.Headers {
				for i := range vs {
					vs[i] = r.string(vs[i])
				}
				res.Headers[k] = vs
			}
		}
		return next.Send(res)
	})
}

// with returns a redactor that also removes the values of one request's
// forwarded headers (the user's token, ID token and allowed cookies), so
// a server quoting its request never hands them back in an answer.
func (r redactor) with(fwd http.Header) redactor {
	if len(fwd) == 0 {
		return r
	}
	forms := append([]string(nil), r.forms...)
	add := func(v string) {
		if v = strings.TrimSpace(v); len(v) >= minSecretLen {
			forms = append(forms, v)
		}
	}
	for k, vs := range fwd {
		for _, v := range vs {
			add(v)
			switch k {
			case "Authorization":
				_, cred, _ := strings.Cut(v, " ") // "Bearer <token>": the token alone too
				add(cred)
			case "Cookie":
				cs, _ := http.ParseCookie(v)
				for _, c := range cs {
					add(c.Value)
				}
			}
		}
	}
	sort.Slice(forms, func(i, j int) bool { return len(forms[i]) > len(forms[j]) })
	return redactor{forms: forms}
}
