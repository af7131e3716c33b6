module github.com/nanhunt/nanhunt

go 1.26.8

require (
	github.com/go-json-experiment/json v1.27.2
	github.com/spf13/cobra v1.10.2
	golang.org/x/sync v0.25.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/term v0.48.0 // indirect
)
