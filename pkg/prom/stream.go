package prom

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
)

// acquire takes one of the client's request slots, waiting while all are in
// use for as long as ctx allows. The returned func gives the slot back.
func (r *rawClient) acquire(ctx context.Context) (func(), error) {
	release := func() { <-r.slots }
	select {
	case r.slots <- struct{}{}:
		return release, nil
	default:
	}
	select {
	case r.slots <- struct{}{}:
		return release, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for one of %d Prometheus request slots: %w", cap(r.slots), ctx.Err())
	}
}

// stream posts form to the endpoint and decodes the answer while it
// arrives. Status handling follows client_golang's client (plus the typed
// auth and size errors of Do), so errors classify the same either way.
func (r *rawClient) stream(ctx context.Context, ep string, form url.Values) (*apiResponse, error) {
	release, err := r.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	resp, err := r.post(ctx, ep, form)
	if err != nil {
		return nil, err
	}
	defer drainClose(resp.Body)
	code := resp.StatusCode
	if code == http.StatusUnauthorized || code == http.StatusForbidden {
		return nil, &Error{Kind: KindUnauthorized, Status: code, Err: errors.New("credentials rejected")}
	}
	if code/100 != 2 && !isAPIErrorCode(code) {
		return nil, statusError(resp)
	}
	body := &cappedReader{r: resp.Body, left: r.maxBody}
	res, err := decodeResponse(body)
	if body.over() {
		return nil, &Error{Kind: KindBadResponse, Status: code, Err: fmt.Errorf("response larger than %d bytes; narrow the query or the time range", r.maxBody)}
	}
	if err != nil {
		return nil, &v1.Error{Type: v1.ErrBadResponse, Msg: err.Error()}
	}
	if err := res.apiError(code); err != nil {
		return nil, err
	}
	return res, nil
}

// statusError describes an answer that is neither success nor one of
// Prometheus' JSON errors: a proxy's or an overloaded server's.
func statusError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode/100 == 5 && !strings.Contains(resp.Header.Get("Content-Type"), "json") {
		return &Error{Kind: KindServer, Status: resp.StatusCode, Err: fmt.Errorf("%s", firstLine(b))}
	}
	t, msg := v1.ErrBadResponse, fmt.Sprintf("bad response code %d", resp.StatusCode)
	switch resp.StatusCode / 100 {
	case 4:
		t, msg = v1.ErrClient, fmt.Sprintf("client error: %d", resp.StatusCode)
	case 5:
		t, msg = v1.ErrServer, fmt.Sprintf("server error: %d", resp.StatusCode)
	}
	return &v1.Error{Type: t, Msg: msg, Detail: string(b)}
}

// post sends the form in the body (queries can be long), falling back to
// GET for servers that refuse POST, as client_golang does.
func (r *rawClient) post(ctx context.Context, ep string, form url.Values) (*http.Response, error) {
	u := r.URL(ep, nil)
	enc := form.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(enc))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := r.hc.Do(req)
	if err != nil || (resp.StatusCode != http.StatusMethodNotAllowed && resp.StatusCode != http.StatusNotImplemented) {
		return resp, err
	}
	drainClose(resp.Body)
	u.RawQuery = enc
	req, err = http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	return r.hc.Do(req)
}

// drainClose reads a little of what is left so the connection can be
// reused, then closes the body.
func drainClose(b io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(b, 64<<10))
	_ = b.Close()
}
