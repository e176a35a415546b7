package eviction

import (
	"time"

	"golang.org/x/time/rate"
)

// Limiter paces moves across the whole fleet: evictions by failover and
// returns to recovered clusters share one token bucket, so neither an
// outage nor a recovery turns into a storm of writes and pod churn.
type Limiter struct {
	bucket *rate.Limiter
}

// NewLimiter allows perSecond moves a second on average and burst at once.
// perSecond <= 0 means no limit.
func NewLimiter(perSecond float64, burst int) *Limiter {
	if perSecond <= 0 {
		return &Limiter{bucket: rate.NewLimiter(rate.Inf, 0)}
	}
	return &Limiter{bucket: rate.NewLimiter(rate.Limit(perSecond), max(burst, 1))}
}

// Take spends a token if one is free; otherwise it reports how long until
// one is.
func (l *Limiter) Take(now time.Time) (bool, time.Duration) {
	r := l.bucket.ReserveN(now, 1)
	if !r.OK() {
		return false, time.Second
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}
