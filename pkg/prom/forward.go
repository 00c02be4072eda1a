package prom

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/backend/httpclient"
)

// Header names Grafana uses for the signed-in user's identity (the SDK's
// backend.OAuthIdentityTokenHeaderName and friends; repeated here so this
// package does not import the backend package for three strings).
const (
	headerAuthorization = "Authorization"
	headerIDToken       = "X-Id-Token"
	headerCookie        = "Cookie"
)

// Forwarding says which of the signed-in user's credentials a data source
// sends on to Prometheus: its "Forward OAuth identity" (oauthPassThru) and
// "Allowed cookies" (keepCookies) settings.
type Forwarding struct {
	// OAuth forwards the user's Authorization and X-Id-Token headers.
	OAuth bool
	// Cookies names the cookies forwarded from the user's Cookie header.
	Cookies []string
}

// Enabled reports whether anything is forwarded at all.
func (f Forwarding) Enabled() bool { return f.OAuth || len(f.Cookies) > 0 }

// Headers picks, from the headers Grafana put on a plugin request, those
// this data source forwards: nil when none. Cookies are filtered to the
// allowed names here even though Grafana filters them too, so a Cookie
// header that reaches the plugin whole (a resource call) never leaks the
// user's Grafana session to Prometheus.
func (f Forwarding) Headers(in http.Header) http.Header {
	out := http.Header{}
	if f.OAuth {
		for _, k := range []string{headerAuthorization, headerIDToken} {
			if v := in.Get(k); v != "" {
				out.Set(k, v)
			}
		}
	}
	if c := f.cookies(in); c != "" {
		out.Set(headerCookie, c)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// cookies returns the allowed cookies of in's Cookie headers, in the
// order they came, as one Cookie header value.
func (f Forwarding) cookies(in http.Header) string {
	if len(f.Cookies) == 0 {
		return ""
	}
	allowed := make(map[string]bool, len(f.Cookies))
	for _, n := range f.Cookies {
		allowed[n] = true
	}
	var kept []string
	for _, line := range in.Values(headerCookie) {
		cs, err := http.ParseCookie(line)
		if err != nil {
			continue // malformed: forward nothing from it rather than guess
		}
		for _, c := range cs {
			if allowed[c.Name] {
				kept = append(kept, c.String())
			}
		}
	}
	return strings.Join(kept, "; ")
}

type forwardedKey struct{}

// WithForwarded returns ctx carrying h (from Forwarding.Headers): every
// request a Client sends under it carries those headers. Only a Client's
// own requests do (its middleware reads them): the SDK's contextual
// middlewares would also reach the node agents' client, which must never
// see a user's token.
func WithForwarded(ctx context.Context, h http.Header) context.Context {
	if len(h) == 0 {
		return ctx
	}
	return context.WithValue(ctx, forwardedKey{}, h.Clone())
}

// forwarded returns the headers ctx carries for Prometheus, if any.
func forwarded(ctx context.Context) http.Header {
	h, _ := ctx.Value(forwardedKey{}).(http.Header)
	return h
}

// forwardingMiddlewareName names the middleware that adds the forwarded
// headers.
const forwardingMiddlewareName = "vllm-forwarded-identity"

// withForwarding appends, innermost, the middleware that puts the
// context's forwarded headers on each request, after whatever configure
// does. Innermost, and only where a header is not set already, so a
// configured basic auth or custom header of the same name wins, as with
// the SDK's own forwarding.
func withForwarding(configure httpclient.ConfigureMiddlewareFunc) httpclient.ConfigureMiddlewareFunc {
	return func(o httpclient.Options, mws []httpclient.Middleware) []httpclient.Middleware {
		if configure != nil {
			mws = configure(o, mws)
		}
		return append(mws, httpclient.NamedMiddlewareFunc(forwardingMiddlewareName,
			func(_ httpclient.Options, next http.RoundTripper) http.RoundTripper {
				return httpclient.RoundTripperFunc(func(req *http.Request) (*http.Response, error) {
					if fwd := forwarded(req.Context()); len(fwd) > 0 {
						req = req.Clone(req.Context()) // a RoundTripper must not change its request
						for k, v := range fwd {
							if req.Header.Get(k) == "" {
								req.Header[k] = append([]string(nil), v...)
							}
						}
					}
					return next.RoundTrip(req)
				})
			}))
	}
}

// IdentityKey names the identity h forwards: a hex SHA-256 of its header
// names and values ("" when h is empty), fit for a cache key, never
// reversible to the token.
func IdentityKey(h http.Header) string {
	if len(h) == 0 {
		return ""
	}
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	sum := sha256.New()
	for _, k := range keys {
		for _, v := range h[k] {
			// Length-prefixed, so the parts can never run together.
			fmt.Fprintf(sum, "%d:%s%d:%s", len(k), k, len(v), v)
		}
	}
	return hex.EncodeToString(sum.Sum(nil))
}
