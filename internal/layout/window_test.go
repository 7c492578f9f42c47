package layout_test

import (
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/window"
)

// A window report lists the window's generations, youngest first, and
// none from before the epoch while the state is younger than its window.
func TestNewWindowReportAges(t *testing.T) {
	epoch := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	spec := window.Spec{Epoch: epoch, Window: 6 * time.Hour, Generations: 6, Policy: window.FirstSeen}
	for _, tt := range []struct {
		cur  int64
		want []int64 // the generations listed
	}{
		{0, []int64{0}},
		{1, []int64{1, 0}},
		{5, []int64{5, 4, 3, 2, 1, 0}},
		{9, []int64{9, 8, 7, 6, 5, 4}},
	} {
		w := layout.NewWindowReport(spec, tt.cur)
		var got []int64
		for i, a := range w.Ages {
			if a.Age != i {
				t.Errorf("cur %d: ages[%d].Age = %d", tt.cur, i, a.Age)
			}
			if want := spec.Start(a.Generation).Format(time.RFC3339); a.Started != want {
				t.Errorf("cur %d: generation %d started %s, want %s", tt.cur, a.Generation, a.Started, want)
			}
			got = append(got, a.Generation)
		}
		if len(got) != len(tt.want) {
			t.Fatalf("cur %d: generations %v, want %v", tt.cur, got, tt.want)
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Fatalf("cur %d: generations %v, want %v", tt.cur, got, tt.want)
			}
		}
	}
}
