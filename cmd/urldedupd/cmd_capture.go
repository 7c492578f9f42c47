package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/urldedupd/urldedupd/internal/capture"
	"github.com/urldedupd/urldedupd/internal/shardfile"
)

type liveOptions struct {
	captureOptions
	iface   string
	bpf     string
	ring    int
	workers int
}

// maxWorkers caps --workers, and its default (the number of cores).
const maxWorkers = 16

func newCaptureCommand(g *globalOptions) *cobra.Command {
	o := &liveOptions{}
	cmd := &cobra.Command{
		Use:   "capture --iface IF [flags] [--bpf EXPR | EXPR...]",
		Short: "Find the HTTP requests, TLS and QUIC server names on a network interface and record their URLs",
		Long: `Capture from a network interface (a mirror port, say) through AF_PACKET with
a memory-mapped ring per worker (--workers, joined by fanout), reassemble
TCP, and find what --proto selects (HTTP/1.x requests, TLS and QUIC
ClientHellos' server names, cleartext HTTP/2 requests), deciding each URL
against the state exactly as replay does for files: by default print each
URL the first time it is seen. Capturing needs root or CAP_NET_RAW (and
CAP_NET_ADMIN for promiscuous mode). On a new state directory the sockets
are opened first, and packets wait in the ring while the state is made. Records are flushed whenever the
interface is idle for 100 ms.

--bpf takes a filter in tcpdump's syntax, or give it after the flags, as
tcpdump takes it (capture -i eth0 tcp port 80); it is compiled by tcpdump
(libpcap's compiler), so tcpdump must be installed to use it. -c N stops
the capture once N records have been written (records already decided
are written too, so a few more may follow).

--workers N (default: the number of cores, at most 16) reads the
interface with N sockets joined in an AF_PACKET fanout group by flow hash
(both directions of a connection, and every fragment of a datagram, reach
one worker), each with its own engine, all deciding into the one state.
The summary adds up the workers' counts; a worker whose socket fails is
opened again, and says so. -c N captures with one worker unless --workers
is given (with several, records other workers decided meanwhile are
written too).

SIGINT or SIGTERM stops the capture: open connections are flushed, the
state is synced, a summary (with the kernel's drop count) goes to stderr,
and the exit code is 0. Needs CAP_NET_RAW (root, or setcap on the binary).`,
		Example: `  urldedupd capture --iface eth1
  urldedupd capture --iface eth1 --bpf 'tcp port 80 or tcp port 8080' --json -o /var/log/urldedupd/urls.jsonl
  urldedupd capture -i eth1 -c 100 tcp port 80`,
		Args: usageArgs(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.iface == "" {
				return usageError(errors.New("--iface is required"))
			}
			if len(args) > 0 { // a filter after the flags, as tcpdump takes it
				if o.bpf != "" {
					return usageError(fmt.Errorf("a filter given twice: --bpf %q and %q; give one", o.bpf, strings.Join(args, " ")))
				}
				o.bpf = strings.Join(args, " ")
			}
			if o.count > 0 && !cmd.Flags().Changed("workers") {
				o.workers = 1 // -c N counts the records of one engine, in order, exactly
			}
			return runCapture(cmd.Context(), g, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.Flags().StringVarP(&o.iface, "iface", "i", "", "network interface to capture from")
	cmd.Flags().StringVar(&o.bpf, "bpf", "", "capture filter in tcpdump syntax, e.g. 'tcp port 80'")
	cmd.Flags().IntVar(&o.ring, "ring-mb", 64, "size of the kernel receive ring in MiB (each worker's)")
	cmd.Flags().IntVar(&o.workers, "workers", min(runtime.NumCPU(), maxWorkers), "capture with this many workers, each its own socket and engine, joined by AF_PACKET fanout (1: one socket, no fanout)")
	return cmd
}

func runCapture(ctx context.Context, g *globalOptions, o *liveOptions, stdout, stderr io.Writer) error {
	if _, err := o.format(); err != nil { // usage errors before opening anything
		return err
	}
	if o.workers < 1 || o.workers > maxWorkers {
		return usageError(fmt.Errorf("--workers %d: not in 1..%d", o.workers, maxWorkers))
	}
	if o.workers > 1 {
		return runCaptureWorkers(ctx, g, o, stdout, stderr)
	}
	src, err := capture.OpenLive(o.iface, &capture.LiveOptions{BPF: o.bpf, RingBytes: o.ring << 20})
	if err != nil {
		return err
	}
	defer src.Close()
	sayCreating(g, o.dryRun, stderr)
	run, err := o.start(ctx, g, stdout, stderr)
	if err != nil {
		return err
	}
	run.eng.Name = o.iface
	fmt.Fprintf(stderr, "urldedupd: capturing on %s\n", o.iface)
	err = run.pipe.Run(run.ctx, src)
	if errors.Is(err, context.Canceled) {
		err = nil // a signal is how a capture ends
	}
	return run.finish(err, stderr)
}

// runCaptureWorkers captures with o.workers sockets in one fanout group.
// All are opened before the first frame is read, so that no flow is hashed
// to a group that is still growing (the kernel spreads over the sockets
// joined so far).
func runCaptureWorkers(ctx context.Context, g *globalOptions, o *liveOptions, stdout, stderr io.Writer) error {
	lo := &capture.LiveOptions{BPF: o.bpf, RingBytes: o.ring << 20, Fanout: capture.FanoutID()}
	srcs := make([]*capture.LiveSource, o.workers)
	defer func() {
		for _, s := range srcs {
			if s != nil {
				s.Close()
			}
		}
	}()
	for i := range srcs {
		s, err := capture.OpenLive(o.iface, lo)
		if err != nil {
			return err
		}
		srcs[i] = s
	}
	sayCreating(g, o.dryRun, stderr)
	run, err := o.start(ctx, g, stdout, stderr)
	if err != nil {
		return err
	}
	w := run.workers(o.workers)
	for i, p := range w.Pipes {
		p.Engine.Name = fmt.Sprintf("%s worker %d", o.iface, i)
	}
	w.OnRestart = func(i int, err error) {
		fmt.Fprintf(stderr, "urldedupd: %s worker %d: %v; opening its socket again\n", o.iface, i, err)
	}
	fmt.Fprintf(stderr, "urldedupd: capturing on %s with %d workers\n", o.iface, o.workers)
	err = w.Run(run.ctx, func(i int) (capture.Source, error) {
		if s := srcs[i]; s != nil { // the socket opened above, the first time
			srcs[i] = nil
			return s, nil
		}
		return capture.OpenLive(o.iface, lo)
	})
	if errors.Is(err, context.Canceled) {
		err = nil // a signal is how a capture ends
	}
	return run.finish(err, stderr)
}

// sayCreating says, before a capture creates its state directory, that it
// does: writing the shards' zeros takes seconds (512 MiB for the bitmap),
// while the capture socket is already open and its ring holds the packets
// that arrive meanwhile (each worker's --ring-mb).
func sayCreating(g *globalOptions, dryRun bool, stderr io.Writer) {
	if g.backend != "" || dryRun {
		return
	}
	if !stateExists(g.dir) {
		fmt.Fprintf(stderr, "urldedupd: creating state %s; packets wait in the capture ring meanwhile\n", g.dir)
	}
}

// stateExists reports whether dir holds a state's metadata (anything but
// "no such file" counts as yes: opening it will say what is wrong).
func stateExists(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, shardfile.MetaName))
	return !errors.Is(err, fs.ErrNotExist)
}
