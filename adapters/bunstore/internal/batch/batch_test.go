package batch

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fake is a store of works (ints) whose batches and lone runs are
// recorded.
type fake struct {
	mu      sync.Mutex
	batches [][]int
	alone   []int
	// refuse answers these works with errRefused; lonely with ErrAlone.
	refuse, lonely map[int]bool
	// fail fails every batch with it.
	fail error
	// deadline is the deadline of the last batch's context.
	deadline time.Time
}

var (
	errRefused = errors.New("refused")
	errDown    = errors.New("database down")
	errBroken  = errors.New("statement refused")
)

func (f *fake) batcher(slots chan struct{}, max int) *Batcher[int] {
	return New(Config[int]{
		Slots: slots, Max: max, Timeout: time.Minute,
		Run: func(ctx context.Context, jobs []Job[int]) ([]error, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.deadline, _ = ctx.Deadline()
			works := make([]int, 0, len(jobs))
			answers := make([]error, len(jobs))
			for i, j := range jobs {
				works = append(works, j.Work)
				switch {
				case f.refuse[j.Work]:
					answers[i] = errRefused
				case f.lonely[j.Work]:
					answers[i] = ErrAlone
				}
			}
			f.batches = append(f.batches, works)
			return answers, f.fail
		},
		Alone: func(_ context.Context, w int) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.alone = append(f.alone, w)
			if f.refuse[w] {
				return errRefused
			}
			return nil
		},
		Outage: func(err error) bool { return errors.Is(err, errDown) },
	})
}

// queueBehindTheSlot holds the only slot while works are queued with Do,
// one goroutine each (ctxs[i] or the test's context), then lets it go and
// returns the answers.
func queueBehindTheSlot(t *testing.T, b *Batcher[int], slots chan struct{}, works []int, ctxs map[int]context.Context) []error {
	t.Helper()
	slots <- struct{}{}
	errs := make([]error, len(works))
	var wg sync.WaitGroup
	for i, w := range works {
		ctx := t.Context()
		if c, ok := ctxs[w]; ok {
			ctx = c
		}
		wg.Go(func() { errs[i] = b.Do(ctx, w) })
	}
	for deadline := time.Now().Add(10 * time.Second); b.Queued() != len(works); {
		if time.Now().After(deadline) {
			<-slots
			t.Fatalf("%d of %d works queued", b.Queued(), len(works))
		}
		time.Sleep(time.Millisecond)
	}
	<-slots
	wg.Wait()
	return errs
}

func TestWorksQueuedTogetherRunAsOneBatchInArrivalOrderWithinMax(t *testing.T) {
	t.Parallel()
	f := &fake{}
	slots := make(chan struct{}, 1)
	b := f.batcher(slots, 4)
	errs := queueBehindTheSlot(t, b, slots, []int{1, 2, 3, 4, 5, 6}, nil)
	for i, err := range errs {
		if err != nil {
			t.Errorf("work %d: %v", i+1, err)
		}
	}
	var n int
	for _, batch := range f.batches {
		if len(batch) > 4 {
			t.Errorf("batch %v has more than Max works", batch)
		}
		n += len(batch)
	}
	if n != 6 || len(f.batches) < 2 || len(f.alone) != 0 {
		t.Fatalf("batches %v, alone %v: want the six works in batches of at most 4", f.batches, f.alone)
	}
}

func TestOneWaitersRefusalIsItsOwn(t *testing.T) {
	t.Parallel()
	f := &fake{refuse: map[int]bool{2: true}, lonely: map[int]bool{3: true}}
	slots := make(chan struct{}, 1)
	errs := queueBehindTheSlot(t, f.batcher(slots, 64), slots, []int{1, 2, 3, 4}, nil)
	if errs[0] != nil || !errors.Is(errs[1], errRefused) || errs[2] != nil || errs[3] != nil {
		t.Fatalf("answers %v: want only work 2 refused", errs)
	}
	if len(f.batches) != 1 || len(f.alone) != 1 || f.alone[0] != 3 {
		t.Fatalf("batches %v, alone %v: want one batch, and work 3 (ErrAlone) run alone", f.batches, f.alone)
	}
}

func TestABatchTheDatabaseRefusedRunsEveryWorkAgainAlone(t *testing.T) {
	t.Parallel()
	f := &fake{fail: errBroken, refuse: map[int]bool{2: true}}
	slots := make(chan struct{}, 1)
	errs := queueBehindTheSlot(t, f.batcher(slots, 64), slots, []int{1, 2, 3}, nil)
	if errs[0] != nil || !errors.Is(errs[1], errRefused) || errs[2] != nil {
		t.Fatalf("answers %v: want each work's answer alone", errs)
	}
	if len(f.alone) != 3 {
		t.Fatalf("alone %v: want every work run again alone", f.alone)
	}
}

func TestABatchUnderAnOutageAnswersEveryWorkWithItAndRunsNoneAgain(t *testing.T) {
	t.Parallel()
	f := &fake{fail: errDown}
	slots := make(chan struct{}, 1)
	errs := queueBehindTheSlot(t, f.batcher(slots, 64), slots, []int{1, 2, 3}, nil)
	for i, err := range errs {
		if !errors.Is(err, errDown) {
			t.Errorf("work %d: %v, want the outage", i+1, err)
		}
	}
	if len(f.alone) != 0 {
		t.Fatalf("alone %v: want none run again", f.alone)
	}
}

func TestABatchEndsAtTheEarliestDeadlineOfItsWaiters(t *testing.T) {
	t.Parallel()
	f := &fake{}
	slots := make(chan struct{}, 1)
	soon := time.Now().Add(30 * time.Second)
	ctx, cancel := context.WithDeadline(t.Context(), soon)
	defer cancel()
	later, cancelLater := context.WithTimeout(t.Context(), 50*time.Second)
	defer cancelLater()
	errs := queueBehindTheSlot(t, f.batcher(slots, 64), slots, []int{1, 2, 3}, map[int]context.Context{2: ctx, 3: later})
	for i, err := range errs {
		if err != nil {
			t.Errorf("work %d: %v", i+1, err)
		}
	}
	if !f.deadline.Equal(soon) {
		t.Fatalf("the batch's deadline is %v, want work 2's, %v", f.deadline, soon)
	}
}

func TestAWaiterPastItsDeadlineIsAnsweredAtOnceAndNotRun(t *testing.T) {
	t.Parallel()
	f := &fake{}
	slots := make(chan struct{}, 1)
	b := f.batcher(slots, 64)
	gone, cancel := context.WithCancel(t.Context())
	// Hold the slot, queue work 1 (live) and work 2, cancel work 2 once
	// queued: it leaves the queue and is never run.
	slots <- struct{}{}
	var errs [2]error
	var wg sync.WaitGroup
	wg.Go(func() { errs[0] = b.Do(t.Context(), 1) })
	wg.Go(func() { errs[1] = b.Do(gone, 2) })
	for b.Queued() != 2 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	for b.Queued() != 1 {
		time.Sleep(time.Millisecond)
	}
	<-slots
	wg.Wait()
	if errs[0] != nil || !errors.Is(errs[1], context.Canceled) {
		t.Fatalf("answers %v: want work 1 done and work 2 canceled", errs)
	}
	for _, batch := range f.batches {
		for _, w := range batch {
			if w == 2 {
				t.Fatalf("batches %v: the canceled work ran", f.batches)
			}
		}
	}
}

func TestATakenWaiterWhoseContextEndedBeforeItsBatchIsNotRun(t *testing.T) {
	t.Parallel()
	var ran atomic.Int64
	slots := make(chan struct{}, 1)
	b := New(Config[int]{Slots: slots, Max: 64, Timeout: time.Minute,
		Run: func(_ context.Context, jobs []Job[int]) ([]error, error) {
			ran.Add(int64(len(jobs)))
			return nil, nil
		},
		Alone:  func(context.Context, int) error { t.Error("nothing runs alone"); return nil },
		Outage: func(error) bool { return false },
	})
	done, cancel := context.WithCancel(t.Context())
	cancel()
	w := &waiter[int]{job: Job[int]{Ctx: done, Work: 1}, done: make(chan error, 1)}
	live := &waiter[int]{job: Job[int]{Ctx: t.Context(), Work: 2}, done: make(chan error, 1)}
	b.run(t.Context(), []*waiter[int]{w, live})
	if err := <-w.done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the ended waiter got %v, want its context's error", err)
	}
	if err := <-live.done; err != nil || ran.Load() != 1 {
		t.Fatalf("the live waiter got %v, %d works ran: want it alone run", err, ran.Load())
	}
}
