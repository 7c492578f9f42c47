package capture

import (
	"context"
	"errors"
	"testing"
)

func TestParseProtos(t *testing.T) {
	tests := []struct {
		list string
		want Protos
		err  error
	}{
		{"http,tls,quic,h2c", AllProtos, nil},
		{"tls", 1 << ProtoTLS, nil},
		{" quic , h2c", 1<<ProtoQUIC | 1<<ProtoH2C, nil},
		{"http,http", 1 << ProtoHTTP, nil},
		{"", 0, ErrProtos},
		{"tls,", 0, ErrProtos},
		{"https", 0, ErrProtos},
		{"TLS", 0, ErrProtos},
	}
	for _, tt := range tests {
		got, err := ParseProtos(tt.list)
		if got != tt.want || !errors.Is(err, tt.err) {
			t.Errorf("ParseProtos(%q) = %v, %v; want %v, %v", tt.list, got, err, tt.want, tt.err)
		}
	}
	for p := range NumProtos {
		s, err := ParseProtos(p.String())
		if err != nil || !s.Has(p) || s != 1<<p {
			t.Errorf("%v: %v, %v", p, s, err)
		}
	}
	if s, err := ParseProtos(AllProtos.String()); err != nil || s != AllProtos {
		t.Errorf("AllProtos round trip: %v, %v", s, err)
	}
	if Protos(0).Has(ProtoHTTP) || AllProtos.Has(NumProtos) {
		t.Error("Has: wrong for an empty set or a protocol past the last")
	}
}

// A Protos set is not limited to eight protocols (it was a uint8): it
// holds MaxProtos bits, and a protocol numbered past 8 would be kept.
func TestProtosWidth(t *testing.T) {
	if s := Protos(1) << (MaxProtos - 1); s == 0 || s>>(MaxProtos-1) != 1 {
		t.Fatalf("Protos holds fewer than %d protocols", MaxProtos)
	}
	if MaxProtos <= 8 || NumProtos > MaxProtos {
		t.Fatalf("MaxProtos %d, NumProtos %d", MaxProtos, NumProtos)
	}
}

// Options.Protos selects what is reported, and Stats.Records counts it:
// HTTP requests are found either way (Assembler.Requests), reported and
// counted only when http is selected.
func TestEngineProtos(t *testing.T) {
	for _, tt := range []struct {
		protos Protos
		report bool
	}{{0, true}, {1 << ProtoHTTP, true}, {1<<ProtoTLS | 1<<ProtoQUIC | 1<<ProtoH2C, false}} {
		src, err := OpenFiles(committedCaptures[0])
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		e := NewEngine(&Options{Protos: tt.protos}, func(r *Request) {
			if r.Proto != ProtoHTTP {
				t.Errorf("record of %v from an HTTP capture", r.Proto)
			}
			n++
		})
		err = e.Run(context.Background(), src)
		src.Close()
		st := e.Stats()
		if err != nil || st.Assembler.Requests == 0 {
			t.Fatalf("protos %v: %v, %+v", tt.protos, err, st.Assembler)
		}
		want := 0
		if tt.report {
			want = int(st.Assembler.Requests)
		}
		if n != want || st.Records[ProtoHTTP] != uint64(want) || st.Records[ProtoTLS]+st.Records[ProtoQUIC]+st.Records[ProtoH2C] != 0 {
			t.Errorf("protos %v: %d reported, records %v; want %d", tt.protos, n, st.Records, want)
		}
	}
}
