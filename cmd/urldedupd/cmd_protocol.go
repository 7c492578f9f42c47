package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/urldedupd/urldedupd/internal/dedupproto"
	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/state"
)

func newProtocolCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "protocol",
		Short: "Run the Redis de-duplication protocol of Chen and Zhou: hosts, centres, task pools",
		Long: `Run a node of the URL de-duplication protocol for distributed crawlers of
Chen and Zhou (the design's literature, docs/literature.md), on real Redis
servers: one a host, one a centre.

A crawler pushes the URLs it extracts onto its host's URL_pool (a Redis
list: RPUSH dedup:URL_pool URL...). The host drops those its finish_URL
(a urldedupd state: -d or --backend) holds and submits the rest to its
network's centre as a frame; the centre asks the network's other hosts,
then the other networks' centres, which ask their hosts, removing every
URL someone holds; what is left goes to task_URL, from which the hosts
move it into finish_URL and their task_pool, a Redis stream whose consumer
group "crawlers" hands each URL out at least once (protocol take).

Every node reads the same topology file (JSON): its networks, each with
a centre and hosts, every node an IP address (its identity in frames) and
a Redis address.`,
		Example: `  urldedupd protocol centre --topology net.json --ip 10.1.0.1
  urldedupd -d /var/lib/urldedupd/finish protocol host --topology net.json --ip 10.1.0.2
  redis-cli -h 10.1.0.2 RPUSH dedup:URL_pool https://example.com/a https://example.com/b
  urldedupd protocol take --redis redis://10.1.0.2:6379/0 --consumer crawler1 --count 10`,
	}
	cmd.AddCommand(newProtocolNodeCommand(g, "centre"), newProtocolNodeCommand(g, "host"),
		newProtocolTakeCommand(), newProtocolAckCommand())
	return cmd
}

type protocolOptions struct {
	topology  string
	ip        string
	frameURLs int
	linger    time.Duration
	claimIdle time.Duration
}

func newProtocolNodeCommand(g *globalOptions, role string) *cobra.Command {
	var o protocolOptions
	cmd := &cobra.Command{Args: usageArgs(cobra.NoArgs)}
	switch role {
	case "centre":
		cmd.Use = "centre --topology FILE --ip IP"
		cmd.Short = "Run a network's centre until SIGTERM"
		cmd.Long = `Run the centre at --ip of the topology until SIGTERM or SIGINT: it asks its
hosts, then the other networks' centres, about each frame its hosts
submit, asks its hosts about the other networks' frames, and hands the
URLs no one holds to task_URL in its Redis. A frame whose answers have not
all come by the topology's deadline is completed without them: its URLs
carry the missing peers' addresses, and the centre says so on standard
error. At exit it prints its counts.`
		cmd.Example = `  urldedupd protocol centre --topology net.json --ip 10.1.0.1`
	case "host":
		cmd.Use = "host --topology FILE --ip IP"
		cmd.Short = "Run a host until SIGTERM; its finish_URL is the state (-d or --backend)"
		cmd.Long = `Run the host at --ip of the topology until SIGTERM or SIGINT. Its finish_URL
is the urldedupd state given by -d or --backend (any layout; made when
missing). It submits what its crawlers push onto URL_pool, answers its
centre's requests from finish_URL, and moves the URLs its centre hands out
into finish_URL and its task_pool. At exit it prints its counts.`
		cmd.Example = `  urldedupd -d /var/lib/urldedupd/finish protocol host --topology net.json --ip 10.1.0.2`
		cmd.Flags().IntVar(&o.frameURLs, "frame-urls", 1000, "URLs of URL_pool one frame takes at most")
		cmd.Flags().DurationVar(&o.linger, "linger", 200*time.Millisecond, "wait this long for URL_pool to fill a frame before submitting what there is (0: at once)")
		cmd.Flags().DurationVar(&o.claimIdle, "claim-idle", 30*time.Second, "take over task_URL entries another host left unacknowledged this long")
	}
	cmd.Flags().StringVar(&o.topology, "topology", "", "the topology file (JSON; see docs/literature.md)")
	cmd.Flags().StringVar(&o.ip, "ip", "", "this node's address in the topology")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return runProtocolNode(cmd.Context(), g, role, &o, cmd.ErrOrStderr())
	}
	return cmd
}

func runProtocolNode(ctx context.Context, g *globalOptions, role string, o *protocolOptions, errOut io.Writer) error {
	if o.topology == "" || o.ip == "" {
		return usageError(fmt.Errorf("protocol %s: --topology and --ip are required", role))
	}
	ip, err := netip.ParseAddr(o.ip)
	if err != nil {
		return usageError(fmt.Errorf("--ip: %w", err))
	}
	top, err := dedupproto.LoadTopology(o.topology)
	if err != nil {
		return usageError(err)
	}
	logf := func(format string, args ...any) { fmt.Fprintf(errOut, "urldedupd: "+format+"\n", args...) }
	var stats *dedupproto.Stats
	switch role {
	case "centre":
		c, err := dedupproto.NewCentre(top, ip, &dedupproto.CentreOptions{Logf: logf})
		if err != nil {
			return usageError(err)
		}
		defer c.Close()
		logf("centre %s of network %s", ip, mustFind(top, ip))
		err = c.Run(ctx)
		stats = c.Stats()
		if err != nil {
			return err
		}
	case "host":
		if o.frameURLs < 1 || o.claimIdle <= 0 || o.linger < 0 {
			return usageError(fmt.Errorf("--frame-urls %d, --claim-idle %v, --linger %v: want the first two above 0, --linger not negative", o.frameURLs, o.claimIdle, o.linger))
		}
		st, err := openState(ctx, g, state.Options{Create: true, Local: shardfile.Options{FlushInterval: time.Second}})
		if err != nil {
			return err
		}
		defer st.Close()
		h, err := dedupproto.NewHost(top, ip, dedupproto.FinishURL(st),
			&dedupproto.HostOptions{FrameURLs: o.frameURLs, Linger: o.linger, ClaimIdle: o.claimIdle, Logf: logf})
		if err != nil {
			return usageError(err)
		}
		defer h.Close()
		logf("host %s of network %s, finish_URL %s", ip, mustFind(top, ip), st)
		err = h.Run(ctx)
		stats = h.Stats()
		if err != nil {
			return err
		}
		if err := st.Sync(); err != nil {
			return err
		}
	}
	stats.Each(func(c dedupproto.Counter, v uint64) {
		if v != 0 {
			fmt.Fprintf(errOut, "%s\t%d\n", c, v)
		}
	})
	return nil
}

func mustFind(top *dedupproto.Topology, ip netip.Addr) string {
	n, _ := top.Find(ip)
	return n.Name
}

type takeOptions struct {
	redis, prefix, consumer string
	count                   int
	idle, wait              time.Duration
	follow, ack             bool
}

func newProtocolTakeCommand() *cobra.Command {
	var o takeOptions
	cmd := &cobra.Command{
		Use:   "take --redis ADDR --consumer NAME",
		Short: "Claim URLs from a host's task_pool and print them",
		Long: `Claim up to --count URLs from the task_pool of the host whose Redis is
--redis, as the consumer --consumer of the group "crawlers", and print each
as its entry ID, a tab and the URL. URLs another consumer claimed and has
not acknowledged for --idle are claimed first (a crawler that died does not
lose them). Acknowledge each URL once fetched (protocol ack), or use --ack
to acknowledge as they are printed. With --follow, take goes on claiming
until SIGTERM.`,
		Example: `  urldedupd protocol take --redis redis://10.1.0.2:6379/0 --consumer crawler1 --count 100
  urldedupd protocol take --redis redis://10.1.0.2:6379/0 --consumer c2 --follow --ack`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTake(cmd.Context(), &o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.redis, "redis", "", "the host's Redis (redis://host:port/db or unix:///path)")
	f.StringVar(&o.prefix, "prefix", dedupproto.DefaultPrefix, "the protocol's key prefix")
	f.StringVar(&o.consumer, "consumer", "", "this crawler's name in the group")
	f.IntVar(&o.count, "count", 100, "URLs to claim at most (each round with --follow)")
	f.DurationVar(&o.idle, "idle", time.Minute, "claim URLs other consumers left unacknowledged this long (0: never)")
	f.DurationVar(&o.wait, "wait", time.Second, "wait this long for new URLs when there are none")
	f.BoolVar(&o.follow, "follow", false, "go on claiming until SIGTERM")
	f.BoolVar(&o.ack, "ack", false, "acknowledge each URL as it is printed")
	return cmd
}

func runTake(ctx context.Context, o *takeOptions, out io.Writer) error {
	if o.redis == "" || o.consumer == "" || o.count < 1 {
		return usageError(fmt.Errorf("protocol take: --redis, --consumer and a --count above 0 are required"))
	}
	t, err := dedupproto.OpenTasks(ctx, o.redis, o.prefix)
	if err != nil {
		return err
	}
	defer t.Close()
	w := bufio.NewWriter(out)
	for {
		tasks, err := t.Claim(ctx, o.consumer, o.count, o.idle, o.wait)
		if err != nil {
			if ctx.Err() != nil {
				return w.Flush()
			}
			return err
		}
		ids := make([]string, 0, len(tasks))
		for _, task := range tasks {
			fmt.Fprintf(w, "%s\t%s\n", task.ID, task.URL)
			ids = append(ids, task.ID)
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if o.ack {
			if err := t.Ack(ctx, ids...); err != nil {
				return err
			}
		}
		if !o.follow || ctx.Err() != nil {
			return nil
		}
	}
}

func newProtocolAckCommand() *cobra.Command {
	var redisAddr, prefix string
	cmd := &cobra.Command{
		Use:   "ack --redis ADDR ID... | ack --redis ADDR -",
		Short: "Acknowledge URLs of a task_pool as fetched",
		Long: `Acknowledge the task_pool entries given by ID (as protocol take prints
them; with "-", read from standard input, the first field of each line):
they are not handed out again.`,
		Example: `  urldedupd protocol ack --redis redis://10.1.0.2:6379/0 1732670000000-0
  urldedupd protocol take --redis redis://10.1.0.2:6379/0 --consumer c1 | fetch | urldedupd protocol ack --redis redis://10.1.0.2:6379/0 -`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if redisAddr == "" {
				return usageError(fmt.Errorf("protocol ack: --redis is required"))
			}
			ids := args
			if len(args) == 1 && args[0] == "-" {
				ids = nil
				sc := bufio.NewScanner(cmd.InOrStdin())
				for line := 1; sc.Scan(); line++ {
					id, _, _ := strings.Cut(sc.Text(), "\t")
					if id = strings.TrimSpace(id); id == "" {
						return fmt.Errorf("protocol ack: standard input: line %d: no entry ID", line)
					}
					ids = append(ids, id)
				}
				if err := sc.Err(); err != nil {
					return fmt.Errorf("protocol ack: standard input: %w", err)
				}
			}
			t, err := dedupproto.OpenTasks(cmd.Context(), redisAddr, prefix)
			if err != nil {
				return err
			}
			defer t.Close()
			return t.Ack(cmd.Context(), ids...)
		},
	}
	cmd.Flags().StringVar(&redisAddr, "redis", "", "the host's Redis (redis://host:port/db or unix:///path)")
	cmd.Flags().StringVar(&prefix, "prefix", dedupproto.DefaultPrefix, "the protocol's key prefix")
	return cmd
}
