package metrics

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// clockTicks is USER_HZ, 100 on every Linux architecture Go supports.
const clockTicks = 100

// collectProcess writes the standard process_* metrics from /proc/self.
func collectProcess(w *Writer) {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return
	}
	// The fields after the command, which is in parentheses and may hold
	// spaces: state is field 3, utime 14, stime 15, starttime 22, vsize
	// 23, rss 24.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return
	}
	f := bytes.Fields(stat[i+1:])
	num := func(n int) float64 { // field n (1-based, as proc(5) counts)
		if n-3 >= len(f) {
			return 0
		}
		v, _ := strconv.ParseFloat(string(f[n-3]), 64)
		return v
	}
	w.Family("process_cpu_seconds_total", Counter, "Total user and system CPU time spent in seconds.")
	w.Sample("process_cpu_seconds_total", (num(14)+num(15))/clockTicks)
	w.Family("process_virtual_memory_bytes", Gauge, "Virtual memory size in bytes.")
	w.Sample("process_virtual_memory_bytes", num(23))
	w.Family("process_resident_memory_bytes", Gauge, "Resident memory size in bytes.")
	w.Sample("process_resident_memory_bytes", num(24)*float64(os.Getpagesize()))
	if boot := bootTime(); boot > 0 {
		w.Family("process_start_time_seconds", Gauge, "Start time of the process since unix epoch in seconds.")
		w.Sample("process_start_time_seconds", boot+num(22)/clockTicks)
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		w.Family("process_open_fds", Gauge, "Number of open file descriptors.")
		w.Sample("process_open_fds", float64(len(fds)))
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		w.Family("process_max_fds", Gauge, "Maximum number of open file descriptors.")
		w.Sample("process_max_fds", float64(lim.Cur))
	}
}

// bootTime is the system's boot time, in seconds since the epoch
// (/proc/stat btime), or 0.
func bootTime() float64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	for line := range bytes.SplitSeq(b, []byte{'\n'}) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			t, _ := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
			return t
		}
	}
	return 0
}
