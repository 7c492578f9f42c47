module github.com/urldedupd/urldedupd/scripts/prfbench

go 1.26

require (
	github.com/dchest/siphash v1.2.3
	github.com/dgryski/go-sip13 v0.0.0-20200911182023-62edffca9245
	github.com/minio/highwayhash v1.0.4
)

require golang.org/x/sys v0.21.0 // indirect
