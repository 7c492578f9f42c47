package capture

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/nettest"
)

// Real clients of other protocols (curl over TLS, SMTP, POP3, IMAP, FTP
// and HTTP/2 with prior knowledge, ssh), recorded by tcpdump: each client stream is counted by its
// kind, none is an HTTP parse error, and nothing is reported but the TLS
// ClientHello (curl sends no SNI for an address, so it is recorded under
// the server's address and port) and, when h2c is selected, the HTTP/2
// request.
func TestNonHTTPStreams(t *testing.T) {
	ns := nettest.Namespace(t)
	dir := t.TempDir()
	key, cert := filepath.Join(dir, "key.pem"), filepath.Join(dir, "cert.pem")
	if out, err := exec.Command("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
		"-keyout", key, "-out", cert, "-subj", "/CN=localhost", "-days", "1").CombinedOutput(); err != nil {
		t.Fatalf("openssl req: %v %s", err, out)
	}
	nettest.Start(t, ns, "openssl", "s_server", "-quiet", "-accept", "127.0.0.1:8443", "-cert", cert, "-key", key, "-www")
	nettest.Start(t, ns, "python3", "../../scripts/greeter.py", "127.0.0.1",
		"2525:220 smtp.test ESMTP", "1100:+OK POP3 ready", "1430:* OK IMAP4rev1 ready", "2121:220 FTP ready", "2222:SSH-2.0-greeter", "8080:not HTTP/2")
	for _, p := range []int{8443, 2525, 1100, 1430, 2121, 2222, 8080} {
		nettest.WaitListen(t, ns, p)
	}

	pcap := filepath.Join(dir, "nonhttp.pcap")
	dump := nettest.Command(ns, "tcpdump", "--immediate-mode", "-U", "-Z", "root", "-i", "lo", "-w", pcap, "tcp")
	stderr, _ := dump.StderrPipe()
	if err := dump.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(dump.Process.Pid, syscall.SIGKILL); dump.Wait() })
	if l, _ := bufio.NewReader(stderr).ReadString('\n'); !strings.Contains(l, "listening on") {
		t.Fatalf("tcpdump said %q", l)
	}

	client := func(args ...string) {
		// The servers refuse after the first command: the clients fail,
		// what they sent is what is looked at.
		nettest.Command(ns, args...).Run()
	}
	curl := []string{"curl", "-s", "--max-time", "30", "-o", "/dev/null"} // generous: a loaded machine
	client(append(curl, "-k", "https://127.0.0.1:8443/")...)
	client(append(curl, "--mail-from", "a@example.test", "--mail-rcpt", "b@example.test", "-T", "/dev/null", "smtp://127.0.0.1:2525")...)
	client(append(curl, "-u", "u:p", "pop3://127.0.0.1:1100/")...)
	client(append(curl, "-u", "u:p", "imap://127.0.0.1:1430/INBOX")...)
	client(append(curl, "ftp://127.0.0.1:2121/")...)
	client(append(curl, "--http2-prior-knowledge", "http://127.0.0.1:8080/")...)
	client("ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=30", "-p", "2222", "127.0.0.1")
	time.Sleep(200 * time.Millisecond)
	syscall.Kill(dump.Process.Pid, syscall.SIGINT)
	dump.Wait()

	// Without h2c selected, the HTTP/2 stream is skipped and counted as
	// such; with it (the default), it is decoded: curl's one request.
	got, st := replayProtos(t, AllProtos&^(1<<ProtoH2C), pcap)
	var want NonHTTPCounts
	for _, k := range []StreamKind{StreamTLS, StreamSMTP, StreamPOP3, StreamIMAP, StreamFTPPOP3, StreamSSH, StreamHTTP2} {
		want[k] = 1
	}
	got2, st2 := replayProtos(t, 0, pcap)
	want2 := want
	want2[StreamHTTP2] = 0
	if strings.Join(got, ",") != "tls  https://127.0.0.1:8443/" || st.Records[ProtoTLS] != 1 || st.TLS.NoSNI != 1 ||
		st.Assembler.ParseErrors != 0 || st.Assembler.NonHTTP != want ||
		strings.Join(got2, ",") != "h2c GET http://127.0.0.1:8080/,tls  https://127.0.0.1:8443/" || st2.Assembler.NonHTTP != want2 || st2.H2C.Connections != 1 {
		t.Errorf("requests %q, %d parse errors, non-HTTP %v; want the ClientHello alone, 0, %v", got, st.Assembler.ParseErrors, st.Assembler.NonHTTP, want)
		t.Errorf("with h2c: requests %q, non-HTTP %v, h2c %+v; want the ClientHello and the h2c GET, %v", got2, st2.Assembler.NonHTTP, st2.H2C, want2)
		conv, _ := exec.Command("tshark", "-r", pcap, "-q", "-z", "conv,tcp").Output()
		t.Logf("the connections recorded:\n%s", conv)
	}
}
