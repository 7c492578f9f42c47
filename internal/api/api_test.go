package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/api"
	"github.com/urldedupd/urldedupd/internal/state"
	"github.com/urldedupd/urldedupd/internal/statetest"
)

func newServer(t *testing.T, opts *api.Options) *httptest.Server {
	t.Helper()
	d := statetest.Bitmap(t)
	srv := httptest.NewServer(api.New(d, opts).Handler())
	t.Cleanup(srv.Close)
	return srv
}

func do(t *testing.T, method, url, ctype, body string, hdr ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestCheck(t *testing.T) {
	srv := newServer(t, nil)
	u := srv.URL + "/v1/check"
	code, body := do(t, "POST", u, "text/plain", "http://a.example/\nHTTP://A.example:80/\r\n\nhttp://b.example/\n")
	if code != 200 || body != "new\ndup\nnew\n" {
		t.Fatalf("text batch: %d %q", code, body)
	}
	code, body = do(t, "POST", u, "application/json", `["http://b.example/","http://c.example/","http://c.example/"]`)
	if code != 200 || body != "{\"results\":[\"dup\",\"new\",\"dup\"],\"new\":1,\"dup\":2}\n" {
		t.Fatalf("JSON batch: %d %q", code, body)
	}
	if code, body = do(t, "POST", u, "application/x-www-form-urlencoded", "http://a.example/\n"); code != 200 || body != "dup\n" {
		t.Fatalf("curl's default content type: %d %q", code, body)
	}
	code, body = do(t, "POST", u+"?dry_run=1", "", "http://d.example/\nhttp://a.example/\n")
	if code != 200 || body != "new\ndup\n" {
		t.Fatalf("dry run: %d %q", code, body)
	}
	if code, body = do(t, "GET", u+"?url=http://d.example/", "", ""); code != 200 || body != "new\n" {
		t.Fatalf("dry run recorded something: %d %q", code, body)
	}
	if code, body = do(t, "GET", u+"?url=http://d.example/", "", "", "Accept", "application/json"); code != 200 || body != "{\"result\":\"dup\"}\n" {
		t.Fatalf("GET JSON: %d %q", code, body)
	}
	code, body = do(t, "GET", srv.URL+"/v1/stats", "", "")
	var rep state.Report
	if err := json.Unmarshal([]byte(body), &rep); code != 200 || err != nil || rep.BitsSet == nil || *rep.BitsSet != 4 || len(rep.Shards) != 256 {
		t.Fatalf("stats: %d %v %+v", code, err, rep)
	}
	if code, body = do(t, "GET", srv.URL+"/healthz", "", ""); code != 200 || body != "ok\n" {
		t.Fatalf("healthz: %d %q", code, body)
	}
}

func TestBadRequests(t *testing.T) {
	srv := newServer(t, &api.Options{MaxBatch: 10, MaxBody: 1 << 16, MaxURL: 100})
	u := srv.URL + "/v1/check"
	tests := []struct {
		name, method, url, ctype, body string
		code                           int
		msg                            string
	}{
		{"empty batch", "POST", u, "text/plain", "\n\n", 400, "empty batch"},
		{"empty body", "POST", u, "", "", 400, "empty batch"},
		{"bad JSON", "POST", u, "application/json", `["http://a/",`, 400, "not a JSON array of strings"},
		{"JSON not strings", "POST", u, "application/json", `[1,2]`, 400, "URL 1 is not a string"},
		{"JSON null", "POST", u, "application/json", `["http://a/",null]`, 400, "URL 2 is null"},
		{"JSON empty string", "POST", u, "application/json", `["http://a/","http://b/",""]`, 400, "URL 3 is empty"},
		{"JSON trailing data", "POST", u, "application/json", `["http://a/"] x`, 400, "not a JSON array of strings: data after the array at byte 15"},
		{"not UTF-8", "POST", u, "text/plain", "http://a/\xff\xfe\n", 400, "not UTF-8"},
		{"huge URL", "POST", u, "text/plain", "http://a/\nhttp://b/" + strings.Repeat("x", 200) + "\n", 400, "URL 2 is 209 bytes"},
		{"huge URL in JSON", "POST", u, "application/json", `["http://a/","http://b/` + strings.Repeat("x", 200) + `"]`, 400, "URL 2 is 209 bytes"},
		{"huge URL in GET", "GET", u + "?url=http://b/" + strings.Repeat("x", 200), "", "", 400, "over the limit of 100"},
		{"batch too large", "POST", u, "text/plain", strings.Repeat("http://a/\n", 11), 413, "batch over the limit of 10 URLs"},
		{"body too large", "POST", u, "text/plain", strings.Repeat("http://aaaaaaaaaaaaaaa/\n", 4000), 413, "body of 96000 bytes, over the limit of 65536"},
		{"content type", "POST", u, "application/xml", "<x/>", 415, "content type"},
		{"method", "PUT", u, "", "", 405, "PUT not allowed"},
		{"missing url", "GET", u, "", "", 400, "missing url"},
	}
	for _, tt := range tests {
		code, body := do(t, tt.method, tt.url, tt.ctype, tt.body)
		if code != tt.code || !strings.HasPrefix(body, "error: ") || !strings.Contains(body, tt.msg) {
			t.Errorf("%s: %d %q; want %d with %q", tt.name, code, body, tt.code, tt.msg)
		}
	}
	if code, body := do(t, "POST", u, "", "http://still.serving/\n"); code != 200 || body != "new\n" {
		t.Fatalf("after bad requests: %d %q", code, body)
	}
}

func TestToken(t *testing.T) {
	srv := newServer(t, &api.Options{Token: "s3cret"})
	if code, _ := do(t, "GET", srv.URL+"/v1/check?url=http://a/", "", ""); code != 401 {
		t.Fatalf("no token: %d", code)
	}
	if code, _ := do(t, "GET", srv.URL+"/v1/check?url=http://a/", "", "", "Authorization", "Bearer wrong"); code != 401 {
		t.Fatalf("wrong token: %d", code)
	}
	if code, body := do(t, "GET", srv.URL+"/v1/check?url=http://a/", "", "", "Authorization", "Bearer s3cret"); code != 200 || body != "new\n" {
		t.Fatalf("token: %d %q", code, body)
	}
	if code, _ := do(t, "GET", srv.URL+"/healthz", "", ""); code != 200 {
		t.Fatalf("healthz needs no token: %d", code)
	}
}

// TestForget: /v1/forget makes URLs of a keyed state new again, text and
// JSON; on a bitmap it is refused (409) and nothing changes.
func TestForget(t *testing.T) {
	for _, name := range []string{"keyed", "keyed-window"} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(api.New(statetest.Memory(t, name), nil).Handler())
			t.Cleanup(srv.Close)
			do(t, "POST", srv.URL+"/v1/check", "text/plain", "http://a.example/\nhttp://b.example/\n")
			code, body := do(t, "POST", srv.URL+"/v1/forget", "text/plain", "http://a.example/\nhttp://z.example/\n")
			if code != 200 || body != "forgotten\nabsent\n" {
				t.Fatalf("forget: %d %q", code, body)
			}
			code, body = do(t, "POST", srv.URL+"/v1/forget", "application/json", `["http://b.example/","http://a.example/"]`)
			if code != 200 || body != "{\"results\":[\"forgotten\",\"absent\"],\"forgotten\":1}\n" {
				t.Fatalf("forget JSON: %d %q", code, body)
			}
			if code, body = do(t, "POST", srv.URL+"/v1/check", "text/plain", "http://a.example/\nhttp://b.example/\n"); body != "new\nnew\n" {
				t.Fatalf("after forget: %d %q", code, body)
			}
			if code, _ = do(t, "GET", srv.URL+"/v1/forget", "", ""); code != http.StatusMethodNotAllowed {
				t.Fatalf("GET /v1/forget: %d", code)
			}
		})
	}
	srv := newServer(t, nil)
	do(t, "POST", srv.URL+"/v1/check", "text/plain", "http://a.example/\n")
	code, body := do(t, "POST", srv.URL+"/v1/forget", "text/plain", "http://a.example/\n")
	if code != http.StatusConflict || !strings.Contains(body, "cannot forget") {
		t.Fatalf("forget on a bitmap: %d %q", code, body)
	}
	if _, body = do(t, "GET", srv.URL+"/v1/check?url=http://a.example/", "", ""); body != "dup\n" {
		t.Fatalf("a refused forget changed the state: %q", body)
	}
}
