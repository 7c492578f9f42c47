package capture

import "github.com/urldedupd/urldedupd/internal/capture/source"

// The sources live in package source; these are the names callers of
// capture use.
type (
	// Packet is one captured frame (source.Packet).
	Packet = source.Packet
	// Source yields captured frames (source.Source).
	Source = source.Source
	// FileSource reads pcap and pcapng files (source.FileSource).
	FileSource = source.FileSource
	// FileOptions configure a FileSource (source.FileOptions).
	FileOptions = source.FileOptions
	// LiveSource captures from a network interface (source.LiveSource).
	LiveSource = source.LiveSource
	// LiveOptions configure a live capture (source.LiveOptions).
	LiveOptions = source.LiveOptions
)

// DefaultMaxRecord is the default FileOptions.MaxRecord.
const DefaultMaxRecord = source.DefaultMaxRecord

// OpenFiles opens capture files to be read one after the other
// (source.OpenFiles).
func OpenFiles(paths ...string) (*FileSource, error) { return source.OpenFiles(paths...) }

// OpenFilesWith is OpenFiles with options (source.OpenFilesWith).
func OpenFilesWith(opts *FileOptions, paths ...string) (*FileSource, error) {
	return source.OpenFilesWith(opts, paths...)
}

// FanoutID returns a fanout group ID for this process's capture of an
// interface (source.FanoutID).
func FanoutID() uint16 { return source.FanoutID() }

// OpenLive opens iface for capture; it needs CAP_NET_RAW
// (source.OpenLive).
func OpenLive(iface string, opts *LiveOptions) (*LiveSource, error) {
	return source.OpenLive(iface, opts)
}
