package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/capture"
	"github.com/urldedupd/urldedupd/internal/capture/decode"
	"github.com/urldedupd/urldedupd/internal/frontend"
	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/state"
	"github.com/urldedupd/urldedupd/internal/statetest"
)

// dashboardFile is the Grafana dashboard scripts/deploy ships.
const dashboardFile = "../../scripts/deploy/grafana-dashboard.json"

// The dashboard is checked against what the daemon exports, in process:
// the metrics of two daemons, as Prometheus would scrape them as two
// targets (instances). The bitmap one has a capture source whose every
// counter is set and an undecoded link type; the keyed one exports the
// keyed layout's own metrics (the not-stored chance). The bitmap one also
// flushes its state in the background and has a RESP front end.

// dashboardExpositions returns each test instance's exposition.
func dashboardExpositions(t *testing.T) map[string]string {
	t.Helper()
	tmp := t.TempDir()
	// A state flushed in the background (an hour apart: the metrics are
	// there, no flush runs), and a RESP front end that has answered one
	// BF.ADD over its socket.
	dir, err := state.Open(context.Background(), filepath.Join(tmp, "state"), &state.Options{Create: true, Local: shardfile.Options{FlushInterval: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dir.Close() })
	events, err := OpenEventLog(filepath.Join(tmp, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { events.Close() })
	respSock := filepath.Join(tmp, "resp.sock")
	bitmap, err := New(dir, Config{Socket: filepath.Join(tmp, "api.sock"), RESPSocket: respSock, Events: events})
	if err != nil {
		t.Fatal(err)
	}
	respAdd(t, bitmap, respSock)
	src := &source{cfg: SourceConfig{Iface: "eth0"}}
	var f figures
	fc := figureCounters()
	for i := range fc {
		*fc[i].Field(&f) = uint64(1000 + i)
	}
	f.stats.Reasons.Add(capture.Reason{Kind: decode.ReasonLinkType, Code: 127}, 5)
	f.stats.Reasons.LumpedUndecoded = 2
	src.stats, src.counts, src.undecided = f.stats, f.counts, f.undecided
	src.up.Store(true)
	bitmap.sources = append(bitmap.sources, src)
	bitmap.metrics.observe("decide", 200, 3e5, 2, 1)

	keyed, err := New(statetest.Memory(t, "keyed"), Config{Socket: filepath.Join(t.TempDir(), "api.sock")})
	if err != nil {
		t.Fatal(err)
	}
	keyed.metrics.observe("decide", 200, 1e5, 1, 0)

	out := map[string]string{}
	for inst, d := range map[string]*Daemon{"bitmap:9090": bitmap, "keyed:9090": keyed} {
		t.Cleanup(func() { // Close would close the sources' (absent) sockets too
			for _, l := range append(d.listeners, d.resp...) {
				l.Close()
			}
		})
		var b bytes.Buffer
		if _, err := d.metrics.reg.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		out[inst] = b.String()
	}
	return out
}

// exportedLabels reads expositions: the name of every sample (and of
// every family, even one without samples) and the label names its samples
// have.
func exportedLabels(expositions map[string]string) map[string]map[string]bool {
	names := map[string]map[string]bool{}
	labelName := regexp.MustCompile(`(?:^|,)([a-zA-Z_][a-zA-Z0-9_]*)="`)
	for _, text := range expositions {
		for line := range strings.SplitSeq(text, "\n") {
			if name, ok := strings.CutPrefix(line, "# TYPE "); ok {
				name, _, _ = strings.Cut(name, " ")
				if names[name] == nil {
					names[name] = map[string]bool{}
				}
				continue
			}
			if line == "" || line[0] == '#' {
				continue
			}
			name, labels := splitSample(line)
			if names[name] == nil {
				names[name] = map[string]bool{}
			}
			for _, m := range labelName.FindAllStringSubmatch(unquoteLabelValues(labels), -1) {
				names[name][m[1]] = true
			}
		}
	}
	return names
}

// splitSample returns the name of an exposition's sample line and its
// labels (between the braces: a label value may hold spaces).
func splitSample(line string) (name, labels string) {
	i := strings.IndexAny(line, "{ ")
	if i < 0 || line[i] == ' ' {
		name, _, _ = strings.Cut(line, " ")
		return name, ""
	}
	in := false
	for j := i + 1; j < len(line); j++ {
		switch c := line[j]; {
		case in && c == '\\':
			j++
		case c == '"':
			in = !in
		case !in && c == '}':
			return line[:i], line[i+1 : j]
		}
	}
	return line[:i], line[i+1:]
}

// unquoteLabelValues blanks the label values of an exposition's {...}, so
// that a value holding `,x="` is not read as a label.
func unquoteLabelValues(s string) string {
	var b strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
			b.WriteByte(c)
		case !in:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func readDashboard(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestDashboard checks the Grafana dashboard against the metrics of
// daemons made in process (two states: a scrape reads each, which takes a
// second or two, once for the three checks).
func TestDashboard(t *testing.T) {
	expositions := dashboardExpositions(t)
	exported := exportedLabels(expositions)
	t.Run("Check", func(t *testing.T) { testDashboardCheck(t, exported) })
	t.Run("CheckFails", func(t *testing.T) { testDashboardCheckFails(t, exported) })
	t.Run("QueriesReturnData", func(t *testing.T) { testDashboardQueriesReturnData(t, expositions) })
}

// The dashboard passes every check: its structure, its queries against the
// metrics the daemon exports, its instance variable and its titles.
func testDashboardCheck(t *testing.T, exported map[string]map[string]bool) {
	for _, p := range checkDashboard(readDashboard(t), exported) {
		t.Error(p)
	}
}

// The checks fail on the dashboard the issue reported (the fill plotted as
// the false-duplicate chance, no instance variable), and on each of a set
// of faults put into the dashboard one at a time.
func testDashboardCheckFails(t *testing.T, exported map[string]map[string]bool) {
	old, err := os.ReadFile("testdata/grafana-dashboard-fill-as-false-dup.json")
	if err != nil {
		t.Fatal(err)
	}
	problems := strings.Join(checkDashboard(old, exported), "\n")
	for _, want := range []string{
		`panel 1 "Fill ratio (false-duplicate chance)": plots urldedupd_fill_ratio under a title of a chance`,
		`no template variable "instance"`,
		`panel 1 "Fill ratio (false-duplicate chance)" A: urldedupd_fill_ratio is not filtered by instance=~"$instance"`,
		`no annotations`,
		`no panel plots urldedupd_not_stored_chance`,
		`no panel plots urldedupd_capture_records_total by proto`,
		`no panel plots urldedupd_capture_undecoded_frames_total by reason`,
		`no panel plots urldedupd_resp_requests_total by command`,
		`no panel plots urldedupd_state_flushes_total by result`,
	} {
		if !strings.Contains(problems, want) {
			t.Errorf("the old dashboard's problems lack %q; they are:\n%s", want, problems)
		}
	}

	good := readDashboard(t)
	for _, c := range []struct {
		name, old, new, want string
		all                  bool // replace every old, not the first
	}{
		{"the issue's title", `"title": "Fill ratio",`, `"title": "Fill ratio (false-duplicate chance)",`, "plots urldedupd_fill_ratio under a title of a chance", false},
		{"fill under another title", `"title": "Fill ratio",`, `"title": "State",`, `plots urldedupd_fill_ratio but its title does not say "fill"`, false},
		{"a metric not exported", `urldedupd_false_duplicate_chance{`, `urldedupd_false_dup_chance{`, "urldedupd_false_dup_chance, which the daemon does not export", false},
		{"no instance filter", `urldedupd_estimated_distinct_urls{instance=~\"$instance\"}`, `urldedupd_estimated_distinct_urls`, "urldedupd_estimated_distinct_urls is not filtered by instance", false},
		{"an instance filter that matches one value", `urldedupd_estimated_distinct_urls{instance=~\"$instance\"}`, `urldedupd_estimated_distinct_urls{instance=\"$instance\"}`, "is not filtered by instance", false},
		{"a label the metric lacks", `sum by (instance, proto) (rate(urldedupd_capture_records_total`, `sum by (instance, protocol) (rate(urldedupd_capture_records_total`, `label "protocol", which none of its metrics has`, false},
		{"a matcher on a label the metric lacks", `urldedupd_not_stored_chance{instance=~\"$instance\"}`, `urldedupd_not_stored_chance{instance=~\"$instance\",source=\"eth0\"}`, `urldedupd_not_stored_chance has no label "source"`, false},
		{"a legend label aggregated away", `"{{instance}} {{proto}}"`, `"{{instance}} {{source}}"`, `legend {{source}}: the query's result has no such label`, false},
		{"an unknown function", `(rate(urldedupd_capture_records_total`, `(rat(urldedupd_capture_records_total`, `rat(: not a PromQL function`, false},
		{"an undefined variable", `urldedupd_capture_records_total{instance=~\"$instance\"}[$__rate_interval]`, `urldedupd_capture_records_total{instance=~\"$instance\"}[$interval]`, `undefined variable $interval`, false},
		{"a key misspelt", `"gridPos": {`, `"gridpos": {`, `unknown key "gridpos"`, false},
		{"a value of the wrong type", `"schemaVersion": 39`, `"schemaVersion": "39"`, "schemaVersion of type int", false},
		{"a panel off the grid", `"x": 20,`, `"x": 22,`, "off Grafana's 24 columns", false},
		{"panels overlapping", `"x": 4,`, `"x": 2,`, "overlaps", false},
		{"an id twice", `"id": 2,`, `"id": 1,`, "id 1 twice", false},
		{"a fixed datasource", `"uid": "${datasource}"`, `"uid": "P1809F7CD0C75ACF3"`, `panel 1 "Fill ratio": datasource`, true},
		{"a panel type misspelt", `"type": "timeseries"`, `"type": "timeserie"`, `type "timeserie"`, false},
		{"no instance variable", `"name": "instance"`, `"name": "host"`, `no template variable "instance"`, false},
		{"an instance variable of other values", `label_values(urldedupd_build_info, instance)",`, `label_values(urldedupd_build_info, job)",`, `label_values(METRIC, instance)`, false},
		{"invalid JSON", `"panels": [`, `"panels": [,`, "invalid character", false},
	} {
		if !bytes.Contains(good, []byte(c.old)) {
			t.Errorf("%s: the dashboard has no %s to change", c.name, c.old)
			continue
		}
		n := 1
		if c.all {
			n = -1
		}
		bad := bytes.Replace(good, []byte(c.old), []byte(c.new), n)
		problems := checkDashboard(bad, exported)
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, c.want) }) {
			t.Errorf("%s: no problem says %q; problems: %q", c.name, c.want, problems)
		}
	}
}

// Every query of the dashboard, as Grafana sends it with every instance
// selected, returns data from the daemons' series: Prometheus' own rule
// tester (promtool test rules) evaluates each against the expositions,
// scraped once a minute for half an hour.
func testDashboardQueriesReturnData(t *testing.T, expositions map[string]string) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool not found (Debian package prometheus; scripts/install-deps.sh installs it)")
	}
	var d dashboardJSON
	if err := json.Unmarshal(readDashboard(t), &d); err != nil {
		t.Fatal(err)
	}
	grafana := strings.NewReplacer("$__rate_interval", "5m", "${instance}", ".*", "$instance", ".*")
	type rule struct {
		Alert string `json:"alert"`
		Expr  string `json:"expr"`
	}
	type alertTest struct {
		EvalTime  string           `json:"eval_time"`
		Alertname string           `json:"alertname"`
		ExpAlerts []map[string]any `json:"exp_alerts"`
	}
	var rules []rule
	var tests []alertTest
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			name := fmt.Sprintf("panel %d %q query %s", p.ID, p.Title, tg.RefID)
			rules = append(rules, rule{Alert: name, Expr: "count(" + grafana.Replace(tg.Expr) + ") > 0"})
			tests = append(tests, alertTest{EvalTime: "30m", Alertname: name, ExpAlerts: []map[string]any{{"exp_labels": map[string]string{}}}})
		}
	}
	if len(rules) == 0 {
		t.Fatal("no queries in the dashboard")
	}
	var series []map[string]string
	for inst, text := range expositions {
		sc := bufio.NewScanner(strings.NewReader(text))
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "urldedupd_") {
				continue
			}
			name, labels := splitSample(line)
			if labels != "" {
				labels = "," + labels
			}
			s := name + `{instance="` + inst + `",job="urldedupd"` + labels + "}"
			series = append(series, map[string]string{"series": s, "values": "1+1x40"})
		}
	}
	dir := t.TempDir()
	write := func(name string, v any) string {
		b, err := json.MarshalIndent(v, "", " ") // JSON is YAML
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	rulesFile := write("rules.yml", map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	testFile := write("test.yml", map[string]any{
		"rule_files":          []string{rulesFile},
		"evaluation_interval": "1m",
		"tests":               []any{map[string]any{"interval": "1m", "input_series": series, "alert_rule_test": tests}},
	})
	out, err := exec.Command(promtool, "test", "rules", testFile).CombinedOutput()
	if err != nil {
		t.Errorf("promtool test rules: %v: a query returned no data or did not parse:\n%s", err, out)
	}
}

// dashboardJSON is what the checks read of a dashboard (its keys are
// checked against Grafana's dashboard schema first, see dashboardKeys).
type dashboardJSON struct {
	Title         string `json:"title"`
	UID           string `json:"uid"`
	SchemaVersion int    `json:"schemaVersion"`
	Time          *struct{ From, To string }
	Annotations   json.RawMessage `json:"annotations"`
	Templating    struct {
		List []variableJSON `json:"list"`
	} `json:"templating"`
	Panels []panelJSON `json:"panels"`
}

type datasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type variableJSON struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"`
	Datasource *datasourceRef  `json:"datasource"`
	IncludeAll bool            `json:"includeAll"`
	AllValue   *string         `json:"allValue"`
}

type panelJSON struct {
	ID          int    `json:"id"`
	Type        string `json:"type"`
	Title       string `json:"title"`
	GridPos     *struct{ X, Y, W, H int }
	Datasource  *datasourceRef `json:"datasource"`
	FieldConfig *struct {
		Defaults  map[string]json.RawMessage `json:"defaults"`
		Overrides []json.RawMessage          `json:"overrides"`
	} `json:"fieldConfig"`
	Targets []struct {
		RefID        string         `json:"refId"`
		Expr         string         `json:"expr"`
		LegendFormat string         `json:"legendFormat"`
		Datasource   *datasourceRef `json:"datasource"`
	} `json:"targets"`
}

// dashboardKeys are the keys Grafana's dashboard schema allows in each
// object the dashboard's structure is made of, the required ones marked
// with a trailing "!": those of the Grafana Foundation SDK's Go types
// (github.com/grafana/grafana-foundation-sdk/go v0.0.22, generated from
// Grafana's "dashboard" kind and Prometheus dataquery schemas; its strict
// decoding accepts the dashboard). encoding/json matches keys without
// regard to case: these are checked exactly first, so that "gridpos" is
// caught.
var dashboardKeys = map[string]string{
	"dashboard": "id uid title description revision gnetId tags timezone editable graphTooltip time timepicker " +
		"fiscalYearStartMonth liveNow weekStart refresh schemaVersion! version panels templating! annotations! links snapshot preload",
	"time":       "from! to!",
	"variable":   "type! name! label hide skipUrlSync description query datasource current multi allowCustomValue options refresh sort includeAll allValue regex staticOptions staticOptionsOrder auto auto_min auto_count definition",
	"panel":      "type! id pluginVersion targets title description transparent datasource gridPos links repeat repeatDirection maxPerRow maxDataPoints transformations interval timeFrom timeShift hideTimeOverride timeCompare libraryPanel cacheTimeout queryCachingTTL options fieldConfig",
	"gridPos":    "h! w! x! y! static",
	"datasource": "type uid",
	// The Prometheus data source's query (its dataquery schema).
	"target":      "expr! refId datasource editorMode exemplar format hide instant interval intervalFactor intervalMs legendFormat maxDataPoints queryType range adhocFilters groupByKeys resultAssertions scopes timeRange",
	"fieldConfig": "defaults! overrides!",
	"defaults":    "displayName displayNameFromDS description path writeable filterable unit decimals min max mappings thresholds color links actions noValue custom fieldMinMax",
}

// panelTypes are Grafana's core panel plugins (a misspelt one would show
// "Panel plugin not found").
var panelTypes = strings.Fields("stat timeseries gauge bargauge table text heatmap histogram piechart barchart " +
	"state-timeline status-history logs news dashlist alertlist annolist nodeGraph trend xychart candlestick canvas geomap")

// checkKeys reports the keys of the object raw, at path, that the schema's
// kind does not allow, and the required ones it lacks.
func checkKeys(problems *[]string, path, kind string, raw json.RawMessage) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		*problems = append(*problems, fmt.Sprintf("%s: not an object: %v", path, err))
		return
	}
	allowed := map[string]bool{}
	for _, k := range strings.Fields(dashboardKeys[kind]) {
		k, required := strings.CutSuffix(k, "!")
		allowed[k] = true
		if _, ok := obj[k]; required && !ok {
			*problems = append(*problems, fmt.Sprintf("%s: no %s", path, k))
		}
	}
	for k := range obj {
		if !allowed[k] {
			*problems = append(*problems, fmt.Sprintf("%s: unknown key %q (Grafana's %s schema has no such field)", path, k, kind))
		}
	}
}

// checkSchema checks the keys of the objects the dashboard data is made
// of (dashboard, time, variables, panels and their grid positions, data
// sources, field configs and queries; not a panel's options nor its
// custom field config, which are its plugin's), and that the values
// decode into the types the checks read.
func checkSchema(data []byte) []string {
	var problems []string
	var d struct {
		Time       json.RawMessage `json:"time"`
		Templating struct {
			List []json.RawMessage `json:"list"`
		} `json:"templating"`
		Panels []json.RawMessage `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return []string{"dashboard: " + err.Error()}
	}
	checkKeys(&problems, "dashboard", "dashboard", data)
	if d.Time != nil {
		checkKeys(&problems, "time", "time", d.Time)
	}
	for i, v := range d.Templating.List {
		path := fmt.Sprintf("templating.list[%d]", i)
		checkKeys(&problems, path, "variable", v)
		var vv struct {
			Datasource json.RawMessage `json:"datasource"`
		}
		if json.Unmarshal(v, &vv) == nil && vv.Datasource != nil {
			checkKeys(&problems, path+".datasource", "datasource", vv.Datasource)
		}
	}
	for i, p := range d.Panels {
		path := fmt.Sprintf("panels[%d]", i)
		checkKeys(&problems, path, "panel", p)
		var pp struct {
			GridPos     json.RawMessage   `json:"gridPos"`
			Datasource  json.RawMessage   `json:"datasource"`
			FieldConfig json.RawMessage   `json:"fieldConfig"`
			Targets     []json.RawMessage `json:"targets"`
		}
		if err := json.Unmarshal(p, &pp); err != nil {
			problems = append(problems, path+": "+err.Error())
			continue
		}
		for kind, raw := range map[string]json.RawMessage{"gridPos": pp.GridPos, "datasource": pp.Datasource, "fieldConfig": pp.FieldConfig} {
			if raw != nil {
				checkKeys(&problems, path+"."+kind, kind, raw)
			}
		}
		if pp.FieldConfig != nil {
			var fc struct {
				Defaults json.RawMessage `json:"defaults"`
			}
			if json.Unmarshal(pp.FieldConfig, &fc) == nil && fc.Defaults != nil {
				checkKeys(&problems, path+".fieldConfig.defaults", "defaults", fc.Defaults)
			}
		}
		for j, tg := range pp.Targets {
			tpath := fmt.Sprintf("%s.targets[%d]", path, j)
			checkKeys(&problems, tpath, "target", tg)
			var tt struct {
				Datasource json.RawMessage `json:"datasource"`
			}
			if json.Unmarshal(tg, &tt) == nil && tt.Datasource != nil {
				checkKeys(&problems, tpath+".datasource", "datasource", tt.Datasource)
			}
		}
	}
	var typed dashboardJSON
	if err := json.Unmarshal(data, &typed); err != nil {
		problems = append(problems, "dashboard: "+err.Error())
	}
	return problems
}

// chanceWords: a panel that plots one of these metrics says so in its
// title. The fill is not a chance (issue: "false-duplicate chance" over
// the fill, 74% on a keyed state whose chance is 3e-9).
var chanceWords = map[string]string{
	"urldedupd_fill_ratio":             "fill",
	"urldedupd_false_duplicate_chance": "false-duplicate",
	"urldedupd_not_stored_chance":      "not-stored",
}

// targetLabels are the labels Prometheus gives every series it scrapes.
var targetLabels = []string{"instance", "job"}

// checkDashboard returns the dashboard's problems: its structure against
// Grafana's schema, and its queries against the metrics exported (the
// label names of each, as exportedLabels reads them).
func checkDashboard(data []byte, exported map[string]map[string]bool) []string {
	problems := checkSchema(data)
	var d dashboardJSON
	if err := json.Unmarshal(data, &d); err != nil {
		return problems
	}
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	if d.Title == "" {
		add("dashboard: no title")
	}
	if !regexp.MustCompile(`^[A-Za-z0-9_-]{1,40}$`).MatchString(d.UID) {
		add("dashboard: uid %q: 1 to 40 letters, digits, - and _", d.UID)
	}
	if d.SchemaVersion < 33 { // data sources referred to by uid objects
		add("dashboard: schemaVersion %d, want 33 or later", d.SchemaVersion)
	}
	if d.Time == nil || d.Time.From == "" || d.Time.To == "" {
		add("dashboard: no time range")
	}
	if d.Annotations == nil {
		add("dashboard: no annotations (Grafana's schema requires the object, even empty)")
	}

	// Variables: each name once, each variable it uses defined before it;
	// a Prometheus data source variable and an instance variable of it.
	vars := map[string]*variableJSON{}
	for i := range d.Templating.List {
		v := &d.Templating.List[i]
		for _, ref := range variableRefs(string(v.Query) + " " + dsUID(v.Datasource)) {
			if vars[ref] == nil && !strings.HasPrefix(ref, "__") {
				add("variable %q: uses $%s, not defined before it", v.Name, ref)
			}
		}
		if !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`).MatchString(v.Name) {
			add("variable %q: not a variable name", v.Name)
		}
		if vars[v.Name] != nil {
			add("variable %q defined twice", v.Name)
		}
		vars[v.Name] = v
	}
	if v := vars["datasource"]; v == nil {
		add(`no template variable "datasource"`)
	} else if v.Type != "datasource" || string(v.Query) != `"prometheus"` {
		add(`variable "datasource": type %q query %s, want a datasource variable of query "prometheus"`, v.Type, v.Query)
	}
	if v := vars["instance"]; v == nil {
		add(`no template variable "instance"`)
	} else {
		if v.Type != "query" || v.Datasource == nil || *v.Datasource != (datasourceRef{"prometheus", "${datasource}"}) {
			add(`variable "instance": want a query variable of data source {"type": "prometheus", "uid": "${datasource}"}`)
		}
		var q string
		if json.Unmarshal(v.Query, &q) != nil { // or, as Grafana 10 saves it, {"query": "...", ...}
			var qo struct{ Query string }
			json.Unmarshal(v.Query, &qo)
			q = qo.Query
		}
		if m := regexp.MustCompile(`^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*instance\s*\)$`).FindStringSubmatch(q); m == nil {
			add(`variable "instance": query %q, want label_values(METRIC, instance)`, q)
		} else if exported[m[1]] == nil {
			add(`variable "instance": %s is not a metric the daemon exports`, m[1])
		}
		if v.IncludeAll && (v.AllValue == nil || *v.AllValue != ".*") {
			add(`variable "instance": "All" should be .* (allValue), not a list of the instances seen`)
		}
	}

	// Panels.
	type rect struct {
		x, y, w, h  int
		description string
	}
	var rects []rect
	ids := map[int]bool{}
	plotted := map[string]bool{}   // metric names plotted
	groupedBy := map[string]bool{} // "metric label": plotted by (label)
	for i, p := range d.Panels {
		name := fmt.Sprintf("panel %d %q", p.ID, p.Title)
		if p.ID <= 0 {
			add("panels[%d]: id %d, want a positive one", i, p.ID)
		} else if ids[p.ID] {
			add("panels[%d]: id %d twice", i, p.ID)
		}
		ids[p.ID] = true
		if p.Title == "" {
			add("%s: no title", name)
		}
		if !slices.Contains(panelTypes, p.Type) {
			add("%s: type %q is not a Grafana panel plugin", name, p.Type)
		}
		if g := p.GridPos; g == nil {
			add("%s: no gridPos", name)
		} else if g.X < 0 || g.Y < 0 || g.W < 1 || g.H < 1 || g.X+g.W > 24 {
			add("%s: gridPos %+v: off Grafana's 24 columns", name, *g)
		} else {
			for _, r := range rects {
				if g.X < r.x+r.w && r.x < g.X+g.W && g.Y < r.y+r.h && r.y < g.Y+g.H {
					add("%s: gridPos overlaps %s", name, r.description)
				}
			}
			rects = append(rects, rect{g.X, g.Y, g.W, g.H, name})
		}
		want := datasourceRef{"prometheus", "${datasource}"}
		if p.Datasource == nil || *p.Datasource != want {
			add(`%s: datasource %+v, want {"type": "prometheus", "uid": "${datasource}"} (the variable, not a data source of one Grafana)`, name, p.Datasource)
		}
		if p.FieldConfig == nil || p.FieldConfig.Defaults == nil || p.FieldConfig.Overrides == nil {
			add("%s: fieldConfig wants defaults and overrides", name)
		}
		if p.Type != "text" && len(p.Targets) == 0 {
			add("%s: no queries", name)
		}
		title := strings.ToLower(p.Title)
		refIDs := map[string]bool{}
		for _, tg := range p.Targets {
			tname := name + " " + tg.RefID
			if tg.RefID == "" || refIDs[tg.RefID] {
				add("%s: refId empty or twice", tname)
			}
			refIDs[tg.RefID] = true
			if tg.Datasource != nil && *tg.Datasource != want {
				add("%s: datasource %+v, not the panel's", tname, *tg.Datasource)
			}
			for _, ref := range variableRefs(tg.Expr + " " + tg.LegendFormat) {
				if vars[ref] == nil && !strings.HasPrefix(ref, "__") {
					add("%s: undefined variable $%s", tname, ref)
				}
			}
			q, err := parsePromQL(tg.Expr)
			if err != nil {
				add("%s: %v", tname, err)
				continue
			}
			if len(q.selectors) == 0 {
				add("%s: selects no metric", tname)
			}
			labels := map[string]bool{} // labels of the metrics selected, and the target's
			for _, l := range targetLabels {
				labels[l] = true
			}
			for _, s := range q.selectors {
				plotted[s.metric] = true
				ls, ok := exported[s.metric]
				if !ok {
					add("%s: %s, which the daemon does not export", tname, s.metric)
				}
				for l := range ls {
					labels[l] = true
				}
				filtered := false
				for _, m := range s.matchers {
					if m.label == "instance" && m.op == "=~" && (m.value == "$instance" || m.value == "${instance}") {
						filtered = true
					}
					if ok && !ls[m.label] && !slices.Contains(targetLabels, m.label) {
						add("%s: %s has no label %q", tname, s.metric, m.label)
					}
				}
				if !filtered {
					add(`%s: %s is not filtered by instance=~"$instance"`, tname, s.metric)
				}
				if word, ok := chanceWords[s.metric]; ok && !strings.Contains(title, word) {
					add("%s: plots %s but its title does not say %q", name, s.metric, word)
				}
				if s.metric == "urldedupd_fill_ratio" && (strings.Contains(title, "false") || strings.Contains(title, "chance")) {
					add("%s: plots urldedupd_fill_ratio under a title of a chance: the fill is not one", name)
				}
			}
			for _, l := range append(slices.Clone(q.grouping), q.dropped...) {
				if !labels[l] {
					add("%s: groups by label %q, which none of its metrics has", tname, l)
				}
			}
			for _, s := range q.selectors {
				for _, l := range q.grouping {
					groupedBy[s.metric+" "+l] = true
				}
			}
			kept := labels // the labels of the result, which the legend may name
			if q.aggregated {
				kept = map[string]bool{}
				for _, l := range q.grouping {
					kept[l] = true
				}
			}
			for _, m := range regexp.MustCompile(`\{\{\s*([^}\s]+)\s*\}\}`).FindAllStringSubmatch(tg.LegendFormat, -1) {
				if !kept[m[1]] {
					add("%s: legend {{%s}}: the query's result has no such label", tname, m[1])
				}
			}
		}
	}
	for metric := range chanceWords {
		if !plotted[metric] {
			add("no panel plots %s", metric)
		}
	}
	for _, g := range []string{"urldedupd_capture_records_total proto", "urldedupd_capture_undecoded_frames_total reason",
		"urldedupd_resp_requests_total command", "urldedupd_state_flushes_total result", "urldedupd_state_checkpoints_total result"} {
		if !groupedBy[g] {
			metric, label, _ := strings.Cut(g, " ")
			add("no panel plots %s by %s", metric, label)
		}
	}
	return problems
}

func dsUID(r *datasourceRef) string {
	if r == nil {
		return ""
	}
	return r.UID
}

// variableRefs are the names of the template variables s uses: $name,
// ${name}, ${name:format}, [[name]].
func variableRefs(s string) []string {
	var names []string
	for _, m := range regexp.MustCompile(`\$\{([A-Za-z0-9_]+)(?::[^}]*)?\}|\$([A-Za-z0-9_]+)|\[\[([A-Za-z0-9_]+)(?::[^\]]*)?\]\]`).FindAllStringSubmatch(s, -1) {
		names = append(names, m[1]+m[2]+m[3])
	}
	return names
}

// promQuery is what the checks read of a PromQL expression: its series
// selectors, the labels its by, on, group_left and group_right clauses
// keep (grouping), those without and ignoring name (dropped), and whether
// it aggregates.
type promQuery struct {
	selectors  []promSelector
	grouping   []string
	dropped    []string
	aggregated bool
}

type promSelector struct {
	metric   string
	matchers []promMatcher
}

type promMatcher struct{ label, op, value string }

type promToken struct {
	kind byte // 'i' identifier, 's' string, 'n' number or duration, 'v' $variable, 'r' [range], 'p' punctuation
	text string
}

var (
	promAggregators = strings.Fields("sum min max avg group stddev stdvar count count_values bottomk topk quantile limitk limit_ratio")
	promFunctions   = strings.Fields("abs absent absent_over_time ceil changes clamp clamp_max clamp_min day_of_month day_of_week " +
		"day_of_year days_in_month delta deriv exp floor histogram_count histogram_sum histogram_fraction histogram_quantile " +
		"holt_winters hour idelta increase irate label_join label_replace ln log2 log10 minute month predict_linear rate " +
		"resets round scalar sgn sort sort_desc sqrt time timestamp vector year avg_over_time min_over_time max_over_time " +
		"sum_over_time count_over_time quantile_over_time stddev_over_time stdvar_over_time last_over_time present_over_time")
	promKeywords = strings.Fields("bool and or unless offset atan2")
)

// lexPromQL splits a PromQL expression into tokens.
func lexPromQL(s string) ([]promToken, error) {
	var toks []promToken
	isIdent := func(c byte, first bool) bool {
		return c == '_' || c == ':' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || !first && '0' <= c && c <= '9'
	}
	isDigit := func(c byte) bool { return '0' <= c && c <= '9' }
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated string at %d", i)
			}
			v := s[i+1 : j]
			if c == '"' {
				u, err := strconv.Unquote(s[i : j+1])
				if err != nil {
					return nil, fmt.Errorf("string %s: %v", s[i:j+1], err)
				}
				v = u
			}
			toks = append(toks, promToken{'s', v})
			i = j + 1
		case isIdent(c, true):
			j := i
			for j < len(s) && isIdent(s[j], false) {
				j++
			}
			toks = append(toks, promToken{'i', s[i:j]})
			i = j
		case isDigit(c) || c == '.' && i+1 < len(s) && isDigit(s[i+1]):
			j := i
			for j < len(s) && (isDigit(s[j]) || s[j] == '.') {
				j++
			}
			if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
				k := j + 1
				if k < len(s) && (s[k] == '+' || s[k] == '-') {
					k++
				}
				if k < len(s) && isDigit(s[k]) {
					for j = k; j < len(s) && isDigit(s[j]); j++ {
					}
				}
			}
			for j < len(s) && ('a' <= s[j] && s[j] <= 'z' || isDigit(s[j])) { // a duration's units: 1h30m
				j++
			}
			toks = append(toks, promToken{'n', s[i:j]})
			i = j
		case c == '$':
			j := i + 1
			if j < len(s) && s[j] == '{' {
				for j < len(s) && s[j] != '}' {
					j++
				}
				j++
			} else {
				for j < len(s) && isIdent(s[j], false) {
					j++
				}
			}
			toks = append(toks, promToken{'v', s[i:min(j, len(s))]})
			i = j
		case c == '[':
			j := strings.IndexByte(s[i:], ']')
			if j < 0 {
				return nil, fmt.Errorf("unterminated [ at %d", i)
			}
			toks = append(toks, promToken{'r', s[i : i+j+1]})
			i += j + 1
		default:
			if i+1 < len(s) && slices.Contains([]string{"=~", "!~", "!=", "==", "<=", ">="}, s[i:i+2]) {
				toks = append(toks, promToken{'p', s[i : i+2]})
				i += 2
			} else if strings.IndexByte("(){},=+-*/%^<>", c) >= 0 {
				toks = append(toks, promToken{'p', s[i : i+1]})
				i++
			} else {
				return nil, fmt.Errorf("unexpected %q at %d", c, i)
			}
		}
	}
	return toks, nil
}

// parsePromQL reads what the checks need of a PromQL expression. It does
// not check its grammar (promtool does, in testDashboardQueriesReturnData):
// it finds its selectors, label clauses and functions, and refuses a
// function it does not know.
func parsePromQL(expr string) (*promQuery, error) {
	toks, err := lexPromQL(expr)
	if err != nil {
		return nil, err
	}
	q := &promQuery{}
	is := func(i int, kind byte, text string) bool {
		return i < len(toks) && toks[i].kind == kind && toks[i].text == text
	}
	for i := 0; i < len(toks); i++ {
		tk := toks[i]
		if tk.kind == 'p' && tk.text == "{" {
			return nil, fmt.Errorf("a selector without a metric name")
		}
		if tk.kind != 'i' {
			continue
		}
		switch {
		case slices.Contains(promAggregators, tk.text):
			q.aggregated = true
		case slices.Contains([]string{"by", "without", "on", "ignoring", "group_left", "group_right"}, tk.text):
			if !is(i+1, 'p', "(") {
				if strings.HasPrefix(tk.text, "group_") {
					continue
				}
				return nil, fmt.Errorf("%s without its labels in ( )", tk.text)
			}
			for i += 2; i < len(toks) && !is(i, 'p', ")"); i++ {
				switch {
				case is(i, 'p', ","):
				case toks[i].kind == 'i':
					if tk.text == "without" || tk.text == "ignoring" {
						q.dropped = append(q.dropped, toks[i].text)
					} else {
						q.grouping = append(q.grouping, toks[i].text)
					}
				default:
					return nil, fmt.Errorf("%s ( ): %q is not a label name", tk.text, toks[i].text)
				}
			}
		case slices.Contains(promFunctions, tk.text):
			if !is(i+1, 'p', "(") {
				return nil, fmt.Errorf("%s without ( )", tk.text)
			}
		case slices.Contains(promKeywords, tk.text):
		default:
			if is(i+1, 'p', "(") {
				return nil, fmt.Errorf("%s(: not a PromQL function", tk.text)
			}
			sel := promSelector{metric: tk.text}
			if is(i+1, 'p', "{") {
				for i += 2; !is(i, 'p', "}"); {
					if i+2 >= len(toks) || toks[i].kind != 'i' || toks[i+1].kind != 'p' || toks[i+2].kind != 's' ||
						!slices.Contains([]string{"=", "!=", "=~", "!~"}, toks[i+1].text) {
						return nil, fmt.Errorf("%s{: not label matchers", tk.text)
					}
					sel.matchers = append(sel.matchers, promMatcher{toks[i].text, toks[i+1].text, toks[i+2].text})
					i += 3
					if is(i, 'p', ",") {
						i++
					}
				}
			}
			q.selectors = append(q.selectors, sel)
		}
	}
	return q, nil
}

// respAdd serves d's RESP front end on sock for one BF.ADD, as a client
// sends it, so that its metrics have a command, a status and a result.
func respAdd(t *testing.T, d *Daemon, sock string) {
	t.Helper()
	var fe frontend.FrontEnd
	for _, f := range d.frontEnds() {
		if f.Name() == "resp" {
			fe = f
		}
	}
	if fe == nil {
		t.Fatal("no RESP front end")
	}
	served := make(chan error, 1)
	go func() { served <- fe.Serve(context.Background()) }()
	c, err := net.DialTimeout("unix", sock, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write([]byte("*3\r\n$6\r\nBF.ADD\r\n$1\r\nk\r\n$19\r\nhttp://example.com/\r\n")); err != nil {
		t.Fatal(err)
	}
	reply, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || reply != ":1\r\n" {
		t.Fatalf("BF.ADD: %q, %v", reply, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fe.Drain()
	if err := fe.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}
