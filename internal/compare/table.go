package compare

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable prints results as an aligned table.
func WriteTable(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "layout\tbytes/URL\tinsert/s\tquery/s\tfalse dup [95% CI]\ttheory\tpersistent\texactly-once across processes\tparameters")
	for _, r := range results {
		lo, hi := r.FalseDup.Interval()
		fmt.Fprintf(tw, "%s\t%.3g\t%s\t%s\t%s [%s, %s]\t%s\t%v\t%s\t%s\n", r.Layout, r.BytesPerURL(), si(r.InsertRate()), si(r.QueryRate()),
			sci(r.FalseDup.Value()), sci(lo), sci(hi), sci(r.Theory), yes(r.Persistent), r.ExactlyOnce, r.Params)
	}
	return tw.Flush()
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// si formats a rate with a k or M suffix: 950, 12.3k, 4.56M.
func si(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return fmt.Sprintf("%.3g", v)
}

// sci formats a probability compactly: 0, 0.0123, 4.5e-07.
func sci(p float64) string {
	if p == 0 || p >= 1e-3 {
		return fmt.Sprintf("%.3g", p)
	}
	return fmt.Sprintf("%.2e", p)
}
