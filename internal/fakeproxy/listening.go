package fakeproxy

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Listening reads what a fakeproxy starting up prints on stdout, up to its
// "serving" line: the address of each of its listeners by name (admin,
// ready). Its caller then reads or discards the rest.
func Listening(stdout io.Reader) (map[string]string, error) {
	addrs := map[string]string{}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if sc.Text() == "serving" {
			return addrs, nil
		}
		f := strings.Fields(sc.Text())
		if len(f) != 3 || f[0] != "listening" {
			return nil, fmt.Errorf("fakeproxy said %q", sc.Text())
		}
		addrs[f[1]] = f[2]
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("fakeproxy exited before serving")
}
