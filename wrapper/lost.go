package wrapper

import (
	"syscall"

	"github.com/proxy-await/proxy-await/drain"
	"github.com/proxy-await/proxy-await/internal/proxyloss"
	"github.com/proxy-await/proxy-await/internal/signals"
)

// proxyLoss is the watch's channel of losses; nil, which no select takes,
// once the watch has ended or when there is none.
func (s *Supervisor) proxyLoss() <-chan proxyloss.Loss {
	if s.proxy == nil {
		return nil
	}
	return s.proxy.Lost()
}

// proxyLost receives the watch's word that the proxy is gone, while the
// child serves (the watch ends at the stop signal). The child gets its stop
// at once, SIGTERM as its rewrite, never held by --term-delay or the drain:
// the pod is not leaving a Service's endpoints, its proxy is gone, and
// serving longer would only fail requests. --kill-after counts from here,
// and the run exits 69 once the child has exited (exitCode).
func (s *Supervisor) proxyLost(loss proxyloss.Loss) {
	if s.phase != serving { // the watch ends at the stop signal: never here
		return
	}
	s.endWatch("")
	s.log.Error("proxy lost: stopping the command, then exiting 69", "event", "proxy_lost",
		"url", loss.URL, "failing", loss.Failing, "error", loss.Err.Error())
	if s.cfg.Probes != nil {
		s.cfg.Probes.Stopping()
	}
	s.drain.Stop() // it learnt the listeners for a hold that will not come
	s.drain = nil
	s.phase, s.stop = lost, syscall.SIGTERM
	if s.rewrite(s.stop) == 0 {
		s.log.Debug("dropped signal (rewritten to 0)", "event", "signal_dropped", "signal", signals.Name(s.stop))
		s.armKill()
		return
	}
	s.deliver("proxy lost", drain.Status{})
}

// endWatch ends the watch of the proxy, if one runs, and says why, unless
// why is "".
func (s *Supervisor) endWatch(why string) {
	if s.proxy == nil {
		return
	}
	s.proxy.Stop()
	s.proxy = nil
	if why != "" {
		s.log.Debug("no longer watching the proxy: "+why, "event", "proxy_watch_ended")
	}
}
