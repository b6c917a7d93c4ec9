#include "engine/finished_count_stages.h"

namespace runledger {

void FinishedCountStages::reset(const Counts& stored) {
  decided_ = stored_ = stored;
  writing_.reset();
}

void FinishedCountStages::writer_succeeded() {
  if (writing_) stored_ = *writing_;
  writing_.reset();
}

}  // namespace runledger
