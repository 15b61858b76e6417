// shutdown-disabled.go: -S POSTs to an endpoint the sidecar has turned
// off, or to a port it does not listen on.

package rules

import "github.com/proxy-await/proxy-await/ctl/sidecar"

const ruleShutdownDisabled = "shutdown-disabled"

func init() {
	register(Rule{
		Name:  ruleShutdownDisabled,
		Level: Error,
		Summary: "`-S` POSTs to an endpoint that is off (Linkerd without `config.linkerd.io/proxy-admin-shutdown: enabled`, off by default since 2.16; " +
			"Cloud SQL Auth Proxy without `--quitquitquit`; consul-dataplane's lifecycle off) or to another port (a moved graceful port)",
		Fix:       "the annotation or flag named, or `--shutdown-url`",
		Policy:    true,
		container: (*judge).shutdownDisabled,
	})
}

func (j *judge) shutdownDisabled() {
	if !j.supervises() || !j.needs(ruleShutdownDisabled, "shutdown") || !j.cfg.Shutdown || !j.needs(ruleShutdownDisabled, shutdownFlags...) {
		return
	}
	line := j.set.LineOf("shutdown-url", "shutdown")
	for _, t := range targets(j.cfg, j.cfg.ShutdownURLs) {
		if s := j.p.Sidecars.At(t.port, t.path, func(s *sidecar.Sidecar) sidecar.Endpoint { return s.ShutdownAt }); s != nil {
			switch {
			case s.ShutdownAt.Unknown != nil:
				j.skip(ruleShutdownDisabled, *s.ShutdownAt.Unknown)
			case s.ShutdownAt.Off != "" && classic(s):
				at := line
				if s.ShutdownAt.OffLine > 0 {
					at = s.ShutdownAt.OffLine
				}
				j.report(ruleShutdownDisabled, at, "-S POSTs %s, which the %s sidecar does not serve, so it would keep running: %s%s",
					t.url, s.Name, s.ShutdownAt.Off, s.WhenClassic())
			}
			continue
		}
		for _, s := range j.p.Sidecars.Sidecars {
			if s.ShutdownAt.Path == t.path && s.ShutdownAt.Port != 0 && classic(s) && (t.preset == "" || t.preset == s.Preset) {
				if s.ShutdownAt.Unknown != nil {
					j.skip(ruleShutdownDisabled, *s.ShutdownAt.Unknown)
					break
				}
				j.report(ruleShutdownDisabled, line, "-S POSTs %s, but the %s sidecar here takes it on port %d%s: set --shutdown-url http://127.0.0.1:%d%s",
					t.url, s.Name, s.ShutdownAt.Port, s.ShutdownAt.Moved, s.ShutdownAt.Port, s.ShutdownAt.Path)
				break
			}
		}
	}
}
