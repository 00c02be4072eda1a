package health

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// stack is the serving stack the series' shapes point to, with the
// evidence, and the profile that fits it ("" when the shapes say
// Kubernetes but not which stack).
type stack struct {
	name, profile, evidence string
}

// detectStack looks at the names and label shapes inside the data
// source's scope, whatever its profile, so it can say when the profile
// does not fit what Prometheus holds.
func detectStack(ctx context.Context, p Prometheus, s models.Settings, now time.Time) (stack, error) {
	b := vllm.Builder{Scope: s.Selector}
	names, err := p.MetricNames(ctx, b.StackNamesSelector(), now.Add(-lookback), now)
	if err != nil {
		return stack{}, err
	}
	vec, _, err := p.Query(ctx, b.StackShapesExpr(), now)
	if err != nil {
		return stack{}, err
	}
	return classify(names, vec), nil
}

// classify names the stack (vllm.ClassifyStack).
func classify(names []string, vec model.Vector) stack {
	st := vllm.ClassifyStack(names, vec)
	return stack{st.Name, st.Profile, st.Evidence}
}

// note is appended to the health message: the stack, and the profile to
// set when the configured one does not fit. A plain fleet under the
// default profile needs no words.
func (st stack) note(s models.Settings) string {
	if s.AutoProfile {
		return st.autoNote(s)
	}
	configured := s.Profile
	if configured == "" {
		configured = models.ProfilePrometheus
	}
	if st.name == "" || (st.profile == models.ProfilePrometheus && configured == models.ProfilePrometheus) {
		return ""
	}
	msg := fmt.Sprintf(". Stack: %s (%s)", st.name, st.evidence)
	switch {
	case st.profile == configured:
		return msg + fmt.Sprintf("; profile %s", configured)
	case st.profile == "" && configured != models.ProfilePrometheus:
		return msg + fmt.Sprintf("; profile %s", configured)
	case st.profile == "":
		return msg + fmt.Sprintf(". The profile is %s, which tells servers apart by %s (the pod IP here): set the profile of your stack (llm-d, kserve or production-stack) to use namespace/pod", configured, s.InstanceLabel)
	default:
		return msg + fmt.Sprintf(". The profile is %s, which does not fit: set profile %s", configured, st.profile)
	}
}

// autoNote names the profile auto chose and why; where the shapes say
// Kubernetes but no stack, it also says which profiles to pick from.
func (st stack) autoNote(s models.Settings) string {
	msg := fmt.Sprintf(". Profile auto: %s (%s)", s.Profile, s.ProfileEvidence)
	if st.name != "" && st.profile == "" && s.Profile == models.ProfilePrometheus && len(s.Identity) == 1 {
		msg += fmt.Sprintf("; Kubernetes pods but no stack recognised, so servers are told apart by %s (the pod IP here): set the profile of your stack (llm-d, kserve or production-stack) to use namespace/pod", s.InstanceLabel)
	}
	return msg
}
