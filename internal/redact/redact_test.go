package redact

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestURL(t *testing.T) {
	for _, tc := range []struct{ raw, shown string }{
		// Nothing to hide: shown as written.
		{"http://127.0.0.1:4191/ready", "http://127.0.0.1:4191/ready"},
		{"HTTP://LOCALHOST:1/q?a=1,2", "HTTP://LOCALHOST:1/q?a=1,2"},
		{"http://token@127.0.0.1/", "http://token@127.0.0.1/"},
		{"http:///ready", "http:///ready"},
		{"http://127.0.0.1:99999/", "http://127.0.0.1:99999/"},
		// A password, whatever it holds, becomes xxxxx.
		{"http://user:secret@127.0.0.1:9901/ready", "http://user:xxxxx@127.0.0.1:9901/ready"},
		{"http://u:p@ss@host/x", "http://u:xxxxx@host/x"},
		{"http://u:pa,ss@host", "http://u:xxxxx@host"},
		{"http://u:p%40ss@h", "http://u:xxxxx@h"},
		{"http://u:p:q@h/", "http://u:xxxxx@h/"},
		{"http://u:@h/", "http://u:xxxxx@h/"},
		{"https://u:p@[::1]:9/x", "https://u:xxxxx@[::1]:9/x"},
		{"//u:p@h/x", "//u:xxxxx@h/x"},
		// A value that does not parse, or whose userinfo runs past the
		// host, is shown up to its host.
		{"http://u:p%zzss@127.0.0.1:9901/ready", "http://xxxxx@127.0.0.1:9901..."},
		{"http://u:pa/ss@h/x", "http://xxxxx@h..."},
		{"http://u:12/ss@h", "http://xxxxx@h"},
		{"http://u:a#b@h", "http://xxxxx@h"},
		{"http://u:a?b@h/ready", "http://xxxxx@h..."},
		{"http://u:p\n@h", "http://xxxxx@h"},
		{"http:u:secret@host", "http:xxxxx@host"},
		{"u:secret@host", "u:xxxxx@host"},
		{"http:/u:secret@host", "http:xxxxx@host"},
		{" http://u:p@h", "xxxxx@h"},
		{"http://h/ready?e=a@b", "http://xxxxx@b"},
		{"127.0.0.1:4191/ready", "127.0.0.1:4191..."},
		{"http://[::1]:x%zz/", "http://[::1]..."},
		// The first half of a URL that a comma cut in its password: the
		// user stays, the start of the password does not.
		{"http://u:pa", "http://u..."},
		{"ss@127.0.0.1:9901/ready", "xxxxx@127.0.0.1:9901..."},
		{"", ""},
	} {
		assert.Equal(t, tc.shown, URL(tc.raw), "%q", tc.raw)
	}
}

func TestURLs(t *testing.T) {
	assert.Equal(t, "http://a:xxxxx@127.0.0.1/r,http://127.0.0.1:2/b?x=1,2",
		URLs([]string{"http://a:pa,ss@127.0.0.1/r", "http://127.0.0.1:2/b?x=1,2"}))
	assert.Equal(t, "", URLs(nil))
}

// passwordSeeds are passwords with what can confuse a reader of URLs:
// commas, "@", ":", escapes valid and not, and the characters that end an
// authority.
var passwordSeeds = []string{
	"secret", "pa,ss", "p@ss", "p:ss", "p%40ss", "p%zzss", "p%4", "pa/ss", "pa?ss", "pa#ss", "a,http://b",
	"a,x://b@c", ",,", "p ss", "p\nss", "[::1]", "12345", "p%2Fss", "p@127.0.0.1:1/x",
}

// FuzzURL builds URLs around a password and finds the password nowhere in
// what URL shows, raw or percent-decoded. The password is the fuzzed text
// between two markers that nothing else in the URL contains, so that a match
// is never innocent, and a part of the password shown from either end shows
// a marker.
func FuzzURL(f *testing.F) {
	for _, p := range passwordSeeds {
		f.Add(p, uint8(0))
		f.Add(p, uint8(1))
		f.Add(p, uint8(2))
	}
	const mark = "Qz7"
	shapes := []func(pass string) string{
		func(p string) string { return "http://user:" + p + "@127.0.0.1:9901/ready" },
		func(p string) string { return "https://user:" + p + "@[::1]/shutdown?x=1" },
		func(p string) string { return "http://user:" + p + "@localhost" },
	}
	f.Fuzz(func(t *testing.T, fuzzed string, shape uint8) {
		pass := mark + fuzzed + mark
		raw := shapes[int(shape)%len(shapes)](pass)
		shown := URL(raw)
		assert.NotContains(t, shown, mark, "%q shown as %q", raw, shown)
		if dec, err := url.PathUnescape(shown); err == nil {
			assert.NotContains(t, dec, mark, "%q shown as %q", raw, shown)
		}
	})
}

func TestWord(t *testing.T) {
	for _, tc := range []struct{ raw, shown string }{
		// No "@", no userinfo: shown as written.
		{"-timeout=5s", "-timeout=5s"},
		{"--a\nb", "--a\nb"},
		{"http://127.0.0.1:4191/ready", "http://127.0.0.1:4191/ready"},
		// A flag's dashes and name stay; the URL after them is redacted.
		{"-shutdown-urls=http://u:secret@127.0.0.1:1/x", "-shutdown-urls=http://u:xxxxx@127.0.0.1:1/x"},
		{"-ready_url=http://u:secret@127.0.0.1:1/x", "-ready_url=http://u:xxxxx@127.0.0.1:1/x"},
		{"--nosuch=http://u:p=ss@h/", "--nosuch=http://u:xxxxx@h/"},
		{"-x=u:secret@h", "-x=u:xxxxx@h"},
		{"eady_url=http://u:secret@h", "eady_url=http://u:xxxxx@h"},
		{"http://u:secret@h", "http://u:xxxxx@h"},
		// Short flags run into the URL: their letters stay as written.
		{"-Sxhttp://u:secret@h/x", "-Sxhttp://u:xxxxx@h/x"},
		{"-HTTP://u:secret@h", "-HTTP://u:xxxxx@h"},
		// What comes before an "=" that is no flag's name is the URL's.
		{"-xhttp://u:p=ss@h/", "-xhttp://u:xxxxx@h/"},
		{"--u:p=ss@h", "--u:xxxxx@h"},
		{"-xu:p=ss@h", "-xu:xxxxx@h"},
		{"--:secret@h", "--xxxxx@h"},
		{"istio,http://u:secret@127.0.0.1:1/x", "xxxxx@127.0.0.1:1..."},
		{"-=http://u:secret@h", "-=http://u:xxxxx@h"},
		{"user@h", "xxxxx@h"},
	} {
		assert.Equal(t, tc.shown, Word(tc.raw), "%q", tc.raw)
	}
}

// FuzzWord puts a URL whose password the fuzzer varies after a prefix the
// fuzzer varies too, as a mistyped flag would (-NAME=URL, -NAMEURL,
// --NAME=URL), and finds the password nowhere in what Word shows, raw,
// percent-decoded or in any case.
func FuzzWord(f *testing.F) {
	for i, p := range passwordSeeds {
		for _, prefix := range []string{"-shutdown-urls=", "-ready_url=", "-url=", "-x=", "--nosuch=", "-S", "-Sx", "", "-", "-a.b_c=", "--=", "-:"} {
			f.Add(prefix, p, uint8(i))
		}
	}
	const mark = "Qz7"
	f.Fuzz(func(t *testing.T, prefix, fuzzed string, shape uint8) {
		if strings.Contains(strings.ToLower(prefix), strings.ToLower(mark)) {
			return // the prefix is not secret: a match in it is no leak
		}
		pass := mark + fuzzed + mark
		raw := prefix + []string{
			"http://user:" + pass + "@127.0.0.1:9901/ready",
			"HTTPS://user:" + pass + "@[::1]/shutdown?x=1",
			"user:" + pass + "@localhost",
		}[int(shape)%3]
		shown := strings.ToLower(Word(raw))
		lower := strings.ToLower(mark)
		assert.NotContains(t, shown, lower, "%q shown as %q", raw, Word(raw))
		if dec, err := url.PathUnescape(shown); err == nil {
			assert.NotContains(t, dec, lower, "%q shown as %q", raw, Word(raw))
		}
	})
}
