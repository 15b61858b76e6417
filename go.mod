module github.com/proxy-await/proxy-await

go 1.26.8

require (
	github.com/hashicorp/go-retryablehttp v0.7.8
	github.com/spf13/pflag v1.1.0
	github.com/stretchr/testify v1.12.1
	golang.org/x/sys v0.49.0
)

require (
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
