module github.com/urldedupd/urldedupd

go 1.26.8

require (
	github.com/edsrzf/mmap-go v1.2.0
	golang.org/x/net v0.62.0
	golang.org/x/sys v0.49.0
)

require golang.org/x/text v0.43.0 // indirect
