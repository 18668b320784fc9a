package plugins_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/palacehq/palace/plugins"
)

func TestModuleIdentity(t *testing.T) {
	rt := newRuntime(t, testConfig())
	m := load(t, rt, "hostile")
	sum := sha256.Sum256(guest(t, "hostile"))
	if got, want := m.Hash(), hex.EncodeToString(sum[:]); got != want {
		t.Errorf("Hash() = %s, want %s", got, want)
	}
	if got := m.Name(); got != "hostile.wasm" {
		t.Errorf("Name() = %q", got)
	}
	// hostile exports gate and lanes; Points follows DecisionPoints order.
	if got, want := m.Points(), []string{"gate", "lanes"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Points() = %q, want %q", got, want)
	}
	m.Points()[0] = "mailbox" // a copy: must not change the module
	if !m.Serves("gate") || m.Serves("mailbox") || m.Serves("scope") {
		t.Errorf("Serves disagrees with Points %q", m.Points())
	}
	_, err := m.Call(context.Background(), "scope", []byte(`{}`))
	if !errors.Is(err, plugins.ErrNotServed) {
		t.Fatalf("error %v, want ErrNotServed", err)
	}
	mustContain(t, err, "call plugin hostile.wasm scope: decision point not served by plugin (it serves gate, lanes)")
}

func TestNewRuntimeRejectsInvalidConfig(t *testing.T) {
	tests := []struct {
		cfg  plugins.Config
		want string
	}{
		{plugins.Config{}.WithDeadline(-time.Second), "new plugin runtime: deadline -1s: must not be negative"},
		{plugins.Config{}.WithOutputLimit(-1), "new plugin runtime: output limit -1: must not be negative"},
		{plugins.Config{}.WithPoolSize(-2), "new plugin runtime: pool size -2: must not be negative"},
		{plugins.Config{}.WithMemoryLimit(5 << 30), "new plugin runtime: memory limit 5368709120 bytes: over the 4 GiB a wasm32 memory can address"},
	}
	for _, tt := range tests {
		_, err := plugins.NewRuntime(context.Background(), tt.cfg)
		if err == nil || err.Error() != tt.want {
			t.Errorf("error %v, want %s", err, tt.want)
		}
	}
}

func TestClose(t *testing.T) {
	rt := newRuntime(t, testConfig())
	m := load(t, rt, "hostile")
	other := load(t, rt, "hostile") // the same bytes load twice, independently
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := m.Call(context.Background(), "gate", []byte(`{"do":"echo"}`)); !errors.Is(err, plugins.ErrClosed) {
		t.Fatalf("Call after Close: %v, want ErrClosed", err)
	}
	assertServes(t, other)

	if err := rt.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Call(context.Background(), "gate", []byte(`{"do":"echo"}`)); !errors.Is(err, plugins.ErrClosed) {
		t.Fatalf("Call after Runtime.Close: %v, want ErrClosed", err)
	}
	_, err := rt.Load(context.Background(), "hostile.wasm", guest(t, "hostile"))
	if !errors.Is(err, plugins.ErrClosed) {
		t.Fatalf("Load after Close: %v, want ErrClosed", err)
	}
}

// TestConcurrentCalls hammers one module from many goroutines, mixing good
// calls with calls that kill their instance: every good call must get its
// own answer (an instance shared between two calls would mix inputs), and
// no failure may leak into another call.
func TestConcurrentCalls(t *testing.T) {
	const goroutines, calls = 16, 30
	rt := newRuntime(t, testConfig().WithPoolSize(4))
	m := load(t, rt, "hostile")
	var wg sync.WaitGroup
	var failures atomic.Int32
	for g := range goroutines {
		wg.Go(func() {
			for i := range calls {
				if g%4 == 0 && i%5 == 0 {
					if _, err := m.Call(context.Background(), "lanes", []byte(`{"do":"panic"}`)); err == nil {
						t.Error("panic call succeeded")
					}
					continue
				}
				in := fmt.Appendf(nil, `{"do":"echo","n":%d}`, g*1000+i)
				out, err := m.Call(context.Background(), "gate", in)
				if err != nil || string(out) != string(in) {
					failures.Add(1)
					t.Errorf("goroutine %d call %d: got %s, %v; want %s", g, i, out, err, in)
				}
			}
		})
	}
	wg.Wait()
	if n := failures.Load(); n > 0 {
		t.Fatalf("%d good calls failed", n)
	}
}

// TestCloseDuringCalls closes a module while calls are in flight: every call
// either answers or fails with ErrClosed, and Close returns.
func TestCloseDuringCalls(t *testing.T) {
	rt := newRuntime(t, testConfig().WithPoolSize(2))
	m := load(t, rt, "hostile")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				_, err := m.Call(context.Background(), "gate", []byte(`{"do":"echo"}`))
				if errors.Is(err, plugins.ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("call: %v", err)
					return
				}
			}
		})
	}
	time.Sleep(50 * time.Millisecond)
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
}
