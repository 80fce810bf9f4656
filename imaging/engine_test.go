package imaging

import (
	"context"
	"errors"
	"testing"
)

func TestRunSteps(t *testing.T) {
	var ran []string
	step := func(name string, err error) Step {
		return Step{Name: name, Run: func() error { ran = append(ran, name); return err }}
	}
	boom := errors.New("boom")
	timings, err := RunSteps(context.Background(), []Step{step("a", nil), step("b", boom), step("c", nil)})
	if err != boom || len(timings) != 2 || timings[1].Name != "b" || len(ran) != 2 {
		t.Errorf("RunSteps = %v, %v; ran %v", timings, err, ran)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran = nil
	cancelling := Step{Name: "cancel", Run: func() error { cancel(); return nil }}
	timings, err = RunSteps(ctx, []Step{cancelling, step("after", nil)})
	if !errors.Is(err, context.Canceled) || len(timings) != 1 || len(ran) != 0 {
		t.Errorf("RunSteps after cancel = %v, %v; ran %v", timings, err, ran)
	}
}
