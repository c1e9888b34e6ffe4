package mask

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestURLMasksSecrets(t *testing.T) {
	const uuid = "1f0e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
	for _, tc := range []struct{ name, raw, want string }{
		{"query values", "http://127.0.0.1:9/hang?token=s3cr3t&a=1", "http://127.0.0.1:9/hang?token=***&a=***"},
		{"bare query token", "http://h/x?s3cr3t", "http://h/x?***"},
		{"empty query value kept", "http://h/x?a=", "http://h/x?a="},
		{"fragment", "http://h/x#s3cr3t", "http://h/x#***"},
		{"user info", "https://bob:pw@example.com/hook", "https://***@example.com/hook"},
		{"user name only", "https://KEY@o1.ingest.example.com/5", "https://***@o1.ingest.example.com/5"},
		{"healthchecks uuid", "https://hc-ping.com/" + uuid + "/fail?rid=r1", "https://hc-ping.com/***/fail?rid=***"},
		{"healthchecks ping key and slug", "https://hc-ping.com/fqOOd6-F4MMNuCEnzTU01w/backup", "https://hc-ping.com/***/backup"},
		{"self-hosted healthchecks", "https://hc.example.com/ping/" + uuid, "https://hc.example.com/ping/***"},
		{"slack", "https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXX", "https://hooks.slack.com/services/***/***/***"},
		{"teams", "https://contoso.webhook.office.com/webhookb2/" + uuid + "@" + uuid + "/IncomingWebhook/abc/" + uuid,
			"https://contoso.webhook.office.com/webhookb2/***/***/***/***"},
		{"discord", "https://discord.com/api/webhooks/123/tok", "https://discord.com/api/webhooks/***/***"},
		{"long token anywhere", "https://example.com/h/a1B2c3D4e5F6g7H8i9J0k1L2m3", "https://example.com/h/***"},
		{"plain path kept", "https://example.com/api/v1/notify", "https://example.com/api/v1/notify"},
		{"redis lock url", "redis://:pw@h:6379/0", "redis://***@h:6379/0"},
		{"postgres lock url", "postgres://u:p@ss@h:5432/db?sslmode=disable", "postgres://***@h:5432/db?sslmode=***"},
		{"redis lock url with a variable", "redis://:${PW}@h:6379/0", "redis://***@h:6379/0"},
		{"dsn without a password", "root@tcp(h:1)/db", "***@tcp(h:1)/db"},
		{"no secrets", "redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"},
		{"mysql dsn", "root:pw@tcp(127.0.0.1:3306)/db?tls=skip-verify", "***@tcp(127.0.0.1:3306)/db?tls=***"},
		{"mysql dsn, @ in the password", "root:p@w@tcp(h:3306)/db", "***@tcp(h:3306)/db"},
		{"unparsable: bad host", "http://user:pw@[bad/hook?token=SECRET", "http://***@[bad/hook?token=***"},
		{"unparsable: bad port", "postgres://u:pw@h:notaport/db", "postgres://***@h:notaport/db"},
		{"unparsable: space", "http://exa mple.com/x?token=s3cr3t", "http://exa mple.com/x?token=***"},
		{"unparsable: ? in the password", "http://u:p?w@h/x", "http://***@h/x"},
		{"unparsable: / in the password", "http://u:p/w@h/x", "http://***@h/x"},
		{"unparsable: slack path", "https://hooks.slack.com/services/T0/B0/XXXX?%zz", "https://hooks.slack.com/services/***/***/***?***"},
		{"no scheme, no secrets", "[bad", "[bad"},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := URL(tc.raw); got != tc.want {
				t.Errorf("URL(%q) = %q, want %q", tc.raw, got, tc.want)
			}
		})
	}
}

// TestTextScrubsWhatALibraryQuotes: a message that quotes raw whole shows
// it masked, and one that quotes its parts in another form loses them.
func TestTextScrubsWhatALibraryQuotes(t *testing.T) {
	const raw = "postgres://bob:pa%2Fss@h:5432/db?password=s3cr3tQ&sslmode=bogus"
	for _, tc := range []struct{ name, msg, want string }{
		{"whole url", `cannot parse "` + raw + `": bad`, `cannot parse "postgres://***@h:5432/db?password=***&sslmode=***": bad`},
		{"unescaped password", "auth failed for pa/ss", "auth failed for ***"},
		{"query value", "password s3cr3tQ refused", "password *** refused"},
		{"nothing quoted", "connection refused", "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Text(tc.msg, raw); got != tc.want {
				t.Errorf("Text(%q) = %q, want %q", tc.msg, got, tc.want)
			}
		})
	}
}

// TestErrorOfARealClient: the errors net/http returns for a target
// that times out or refuses, and url.Parse's, quote the whole URL;
// rebuilt, they keep the target's host and what went wrong, and none of
// its secrets.
func TestErrorOfARealClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hang := ln.Addr().String() // accepts (the kernel's backlog), never answers
	defer ln.Close()
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := refused.Addr().String()
	refused.Close()
	const uuid = "1f0e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
	for _, raw := range []string{"http://u:pw@" + hang + "/hook?token=s3cr3tQ", "http://" + closed + "/" + uuid + "/fail?token=s3cr3tQ"} {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, raw, nil)
		_, err := http.DefaultClient.Do(req)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "s3cr3tQ") {
			t.Fatalf("%s: error %v does not quote the URL; the test proves nothing", raw, err)
		}
		masked := Error(err, raw)
		if msg := masked.Error(); strings.Contains(msg, "s3cr3tQ") || strings.Contains(msg, uuid) || strings.Contains(msg, "u:pw") ||
			!strings.Contains(msg, "Post http://") {
			t.Errorf("Error = %q, want the target without its secrets", msg)
		}
		if !errors.Is(masked, err) {
			t.Error("Error does not unwrap to the error")
		}
	}
	bad := strings.Join([]string{"http://user:pw@[bad", "hook?token=SECRET"}, "/") // no constant: staticcheck would reject it
	_, err = url.Parse(bad)
	if err == nil || !strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("url.Parse error %v does not quote the URL; the test proves nothing", err)
	}
	if msg := Error(err, bad).Error(); strings.Contains(msg, "SECRET") || strings.Contains(msg, ":pw") {
		t.Errorf("Error of url.Parse = %q, still holds a secret", msg)
	}
	if Error(nil, bad) != nil {
		t.Error("Error(nil) is not nil")
	}
}
