// Invitations to a swarm (gossip/control/invitation.h): one the owner issued admits its
// holder to its job until it expires; a forged, altered, foreign or expired one is refused
// with the cause.
#define BOOST_TEST_MODULE gossip_invitation
#include <boost/test/unit_test.hpp>

#include <string>

#include "gossip/control/invitation.h"

using namespace starling::gossip;

namespace {

bool says(const std::string& why, const std::string& part) { return why.find(part) != std::string::npos; }

// The invitation with the first occurrence of `from` after its first line replaced by `to`.
std::string altered(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from, text.find('\n'));
  BOOST_REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

const std::string kJob = job_id_of("model.kind=mlp\nexchange.mode=allreduce\n");

}  // namespace

BOOST_AUTO_TEST_CASE(a_genuine_invitation_admits_until_it_expires) {
  const OwnerKeys owner = new_owner_keys();
  BOOST_TEST(is_owner_public_key(owner.public_key));
  const std::int64_t now = unix_now();
  const std::string forever = issue_invitation(owner.secret_key, kJob, 0);
  BOOST_TEST(check_invitation(forever, owner.public_key, kJob, now).empty());
  const std::string hour = issue_invitation(owner.secret_key, kJob, now + 3600);
  BOOST_TEST(check_invitation(hour, owner.public_key, kJob, now).empty());
  BOOST_TEST(says(check_invitation(hour, owner.public_key, kJob, now + 3601), "expired 1 s ago"));
  BOOST_TEST(issue_invitation(owner.secret_key, kJob, 0) != forever);  // the nonce
}

BOOST_AUTO_TEST_CASE(forged_altered_and_foreign_invitations_are_refused) {
  const OwnerKeys owner = new_owner_keys(), stranger = new_owner_keys();
  const std::int64_t now = unix_now();
  const std::string genuine = issue_invitation(owner.secret_key, kJob, now + 60);
  // Signed by someone else's key: a forgery.
  BOOST_TEST(says(check_invitation(issue_invitation(stranger.secret_key, kJob, 0), owner.public_key, kJob, now),
                  "not the job owner's"));
  // Its expiry pushed back, or its job swapped: the signature no longer covers it.
  BOOST_TEST(says(check_invitation(altered(genuine, "expires " + std::to_string(now + 60), "expires 0"),
                                   owner.public_key, kJob, now),
                  "not the job owner's"));
  const std::string other_job = job_id_of("model.kind=cnn\n");
  BOOST_TEST(says(check_invitation(altered(genuine, kJob, other_job), owner.public_key, kJob, now), "not the job owner's"));
  // Genuine, but for another job of the same owner.
  BOOST_TEST(says(check_invitation(issue_invitation(owner.secret_key, other_job, 0), owner.public_key, kJob, now),
                  "for another job"));
  // One flipped digit of the signature.
  std::string flipped = genuine;
  const auto sig = flipped.find("signature ") + 10;
  flipped[sig] = flipped[sig] == '0' ? '1' : '0';
  BOOST_TEST(says(check_invitation(flipped, owner.public_key, kJob, now), "not the job owner's"));
}

BOOST_AUTO_TEST_CASE(missing_and_malformed_invitations_name_the_cause) {
  const OwnerKeys owner = new_owner_keys();
  const std::int64_t now = unix_now();
  BOOST_TEST(says(check_invitation("", owner.public_key, kJob, now), "holds no invitation"));
  BOOST_TEST(says(check_invitation("hello\n", owner.public_key, kJob, now), "malformed"));
  const std::string genuine = issue_invitation(owner.secret_key, kJob, 0);
  BOOST_TEST(says(check_invitation(genuine + "extra\n", owner.public_key, kJob, now), "malformed"));
  BOOST_TEST(says(check_invitation(altered(genuine, "nonce ", "once "), owner.public_key, kJob, now), "malformed"));
  BOOST_TEST(!is_owner_public_key(owner.secret_key));
  BOOST_CHECK_THROW(issue_invitation(owner.public_key, kJob, 0), std::invalid_argument);
  BOOST_CHECK_THROW(issue_invitation(owner.secret_key, "abc", 0), std::invalid_argument);
}
