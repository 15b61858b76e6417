//go:build !no_retryablehttp

package main

import "github.com/hashicorp/go-retryablehttp"

// A go-retryablehttp client is made, as the shutdown's is.
func init() {
	makeRetryClient = func() { _ = retryablehttp.NewClient() }
}
