package capture

import "github.com/urldedupd/urldedupd/internal/capture/record"

// TextSafe reports whether b holds nothing the text rule forbids: no
// control (C0, DEL, C1), no U+2028 or U+2029, nothing that is not UTF-8
// (record.TextSafe; the rule is in internal/capture/record/text.go).
func TextSafe(b []byte) bool { return record.TextSafe(b) }

// AppendTextSafe appends b to dst with the bytes of every character the
// text rule forbids percent-encoded (record.AppendTextSafe).
func AppendTextSafe(dst, b []byte) []byte { return record.AppendTextSafe(dst, b) }
