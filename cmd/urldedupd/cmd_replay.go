package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/urldedupd/urldedupd/internal/capture"
)

func newReplayCommand(g *globalOptions) *cobra.Command {
	o := &captureOptions{}
	var maxRecord int
	var reads []string
	cmd := &cobra.Command{
		Use:   "replay [flags] FILE... | replay -r FILE | replay -",
		Short: "Find the HTTP requests, TLS and QUIC server names in pcap/pcapng files and record their URLs",
		Long: `Read capture files (pcap or pcapng, plain or gzip-compressed, told apart by
their first bytes) in order, reassemble TCP and IP fragments, and find, on
any port, what --proto selects (all by default): every HTTP/1.x request, as
its absolute URL (http://host[:port]/target); the server name of every TLS
ClientHello, after a STARTTLS prelude too (https://name[:port]/); the same
in QUIC Initial packets; every cleartext HTTP/2 request (h2c, by upgrade,
prior knowledge or inside CONNECT). Each URL is decided against the state:
by default each is printed the first time it is seen.

Link layers: Ethernet, Linux cooked capture (SLL, SLL2), raw IPv4/IPv6, BSD
loopback, IEEE 802.11 (bare, radiotap, Prism, AVS, PPI), NFLOG, PPP; inside them 802.1Q/802.1ad tags, PPPoE sessions, MPLS (IP and
Ethernet pseudowires), LLC/SNAP, and tunnels: IP in IP, GRE, ERSPAN, and
VXLAN, Geneve, GTP-U, Teredo, AYIYA by UDP port (--udp-tunnel); each named
per record by --json ("encap":"vxlan/ethernet"). Timeouts use packet time, so a replay
behaves as the live capture did. A summary goes to stderr at the end, and
progress while it runs when stderr is a terminal. A truncated or corrupt
file ends the run with an error naming the file and packet, after
everything before it was processed. A record longer than --max-record is
skipped as it is read (never held in memory) and counted in the summary,
whatever snap length the file declares. Frames that cannot be decoded are
named in the summary by link type or EtherType with their count; a file in
which no frame could be decoded (or with none) is named, and the exit code
is 6 after the other files were processed.

As with tcpdump, -r FILE names a file to read (repeatable, read before the
arguments), "-" reads a capture from standard input (tcpdump -w - | …),
and -c N stops once N records have been written (records already decided
are written too, so a few more may follow: a URL recorded as seen is
never left out of the output).`,
		Example: `  urldedupd replay monday.pcapng tuesday.pcap.gz
  urldedupd replay --json -o audit.jsonl mirror-*.pcap
  urldedupd replay --all --port 80 --port 8080 proxy.pcap
  urldedupd replay -r monday.pcapng -c 10
  tcpdump -i eth0 -w - 'tcp port 80' | urldedupd replay -`,
		Args: usageArgs(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if maxRecord <= 0 {
				return usageError(fmt.Errorf("--max-record %d: must be at least 1 byte", maxRecord))
			}
			files := append(reads, args...)
			if len(files) == 0 {
				return usageError(errors.New("replay: no capture file (give FILE..., -r FILE, or - for standard input)"))
			}
			if i := slices.Index(files, "-"); i >= 0 && slices.Contains(files[i+1:], "-") {
				return usageError(fmt.Errorf("replay: %w", capture.ErrStdinTwice))
			}
			return runReplay(cmd.Context(), g, o, &capture.FileOptions{MaxRecord: maxRecord}, files, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.Flags().StringArrayVarP(&reads, "read", "r", nil, "a capture file to read (repeatable; - for standard input), as tcpdump -r")
	cmd.Flags().IntVar(&maxRecord, "max-record", capture.DefaultMaxRecord,
		"longest packet record read, in bytes; longer ones are skipped and counted")
	return cmd
}

func plural(n uint64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func runReplay(ctx context.Context, g *globalOptions, o *captureOptions, fo *capture.FileOptions, files []string, stdout, stderr io.Writer) error {
	if _, err := o.format(); err != nil { // usage errors before opening anything
		return err
	}
	src, err := capture.OpenFilesWith(fo, files...)
	if err != nil {
		return err
	}
	defer src.Close()
	run, err := o.start(ctx, g, stdout, stderr)
	if err != nil {
		return err
	}
	var empty []error // files in which no frame could be decoded
	var before capture.Stats
	src.OnFileEnd = func(path string) {
		st := run.eng.Stats()
		if frames := st.Packets - before.Packets; st.Decoded() == before.Decoded() {
			empty = append(empty, fmt.Errorf("%s: %w (%d %s read)", path, capture.ErrNothingDecoded, frames, plural(frames, "frame", "frames")))
		}
		before = st
	}
	stop := showProgress(stderr, src)
	err = run.pipe.Run(run.ctx, src)
	stop()
	err = run.finish(err, stderr)
	if err == nil {
		err = errors.Join(empty...)
	}
	if n := src.SkippedRecords(); n > 0 {
		fmt.Fprintf(stderr, "records over --max-record %d bytes skipped %d\n", src.MaxRecord(), n)
	}
	if n := src.ClampedRecords(); n > 0 {
		fmt.Fprintf(stderr, "records with captured length over original length read whole %d\n", n)
	}
	return err
}

// showProgress prints bytes done of total and the rate on stderr, twice a
// second, when stderr is a terminal. The returned function stops it.
func showProgress(stderr io.Writer, src *capture.FileSource) func() {
	f, ok := stderr.(*os.File)
	if !ok || !isTerminal(f) {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		start := time.Now()
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(f, "\r\033[K")
				return
			case <-t.C:
				n, total := src.Progress()
				rate := float64(n) / time.Since(start).Seconds() / 1e6
				fmt.Fprintf(f, "\r\033[K%.1f of %.1f MB (%.0f%%)  %.1f MB/s", float64(n)/1e6, float64(total)/1e6,
					100*float64(n)/float64(max(total, 1)), rate)
			}
		}
	}()
	return func() { close(done); <-finished }
}
