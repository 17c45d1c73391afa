"""The vocabularies memory extraction recognises: allergens, conditions, medicines, foods, diets, family
relations, professions. Each is an alternation for a regular expression, longest phrases first where one
contains another, so "tree nuts" wins over "nuts". Kept apart from the patterns so that a word can be
added without reading them.
"""

from __future__ import annotations


def each(words: str) -> list[str]:
    """The phrases of a |-separated list."""
    return [w.strip() for w in words.split("|") if w.strip()]


def word_set(text: str) -> frozenset[str]:
    """The words of a text, as a set."""
    return frozenset(text.split())


def alternation(words: str) -> str:
    """A regular-expression alternation of the |-separated phrases, longest first; a space in a phrase
    matches a space or a hyphen ("gluten free", "gluten-free")."""
    phrases = sorted(set(each(words)), key=len, reverse=True)
    return "|".join(p.replace(" ", r"[\s-]") for p in phrases)


# Only these make "allergic to X" an allergy: "allergic to Mondays" is a joke, not a fact. Kept by kind, so
# that a memory of one says what it means for the person (a food to avoid eating, a medicine to avoid taking).
FOOD_ALLERGENS = (
    "peanuts|peanut|tree nuts|tree nut|nuts|nut|almonds|almond|cashews|cashew|walnuts|walnut|hazelnuts|hazelnut|"
    "pistachios|pistachio|pecans|pecan|brazil nuts|macadamia|sesame|sesame seeds|soy|soya|wheat|gluten|eggs|egg|"
    "milk|dairy|lactose|fish|shellfish|seafood|shrimp|shrimps|prawns|prawn|crab|lobster|mussels|oysters|molluscs|"
    "celery|mustard|lupin|sulphites|sulfites|kiwi|kiwis|kiwi fruit|strawberries|strawberry|bananas|banana|avocado|"
    "avocados|tomatoes|tomato|peaches|peach|apples|apple|citrus|oranges|mango|pineapple|corn|coconut|garlic|onions|"
    "onion|cinnamon|chocolate|mushrooms|red meat|pork|beef|chicken"
)
MEDICINE_ALLERGENS = (
    "penicillin|amoxicillin|ibuprofen|aspirin|codeine|morphine|sulfa drugs|sulfa|sulfonamides|nsaids|antibiotics|"
    "erythromycin|cephalosporins|contrast dye|anaesthetics|anesthetics"
)
OTHER_ALLERGENS = (
    "latex|iodine|pollen|grass|grass pollen|tree pollen|hay|ragweed|dust|dust mites|house dust|mould|mold|cats|cat|"
    "dogs|dog|horses|rabbits|feathers|pet dander|animal dander|dander|bees|bee|bee stings|wasps|wasp|wasp stings|"
    "insect stings|stings|mosquito bites|nickel|perfume|fragrances|sunscreen|wool|lanolin|plasters|adhesive|"
    "chlorine|histamine"
)
ALLERGENS = alternation(f"{FOOD_ALLERGENS}|{MEDICINE_ALLERGENS}|{OTHER_ALLERGENS}")
# Medicines by name ending, beside the list: "-cillin", "-pril", "-statin", "-olol" and so on.
MEDICINE_ENDINGS = (
    r"[a-z]+(?:cillin|mycin|floxacin|pril|sartan|statin|olol|azepam|azolam|prazole|tidine|triptan|mab|pine|oxetine|"
    r"pramine)"
)
MEDICINES = alternation(
    "metformin|insulin|sertraline|fluoxetine|citalopram|escitalopram|venlafaxine|mirtazapine|bupropion|lisinopril|"
    "amlodipine|atorvastatin|simvastatin|levothyroxine|thyroxine|warfarin|apixaban|rivaroxaban|heparin|aspirin|"
    "ibuprofen|paracetamol|acetaminophen|naproxen|omeprazole|lansoprazole|salbutamol|ventolin|prednisolone|"
    "prednisone|methotrexate|adalimumab|humira|ritalin|methylphenidate|adderall|elvanse|vyvanse|lithium|"
    "lamotrigine|levetiracetam|sodium valproate|gabapentin|pregabalin|antidepressants|an antidepressant|"
    "beta blockers|blood thinners|the pill|birth control|the contraceptive pill|hrt|vitamin d|vitamin b12|b12|"
    "iron tablets|iron supplements|iron|folic acid|melatonin|antihistamines|cetirizine|loratadine|statins|"
    "propranolol|bisoprolol|ramipril|losartan|metoprolol|codeine|tramadol|morphine|an inhaler|inhalers|"
    "an epipen|epipen|ozempic|semaglutide|spironolactone|finasteride|tamoxifen|letrozole|clopidogrel|"
    "furosemide|allopurinol|colchicine|hydroxychloroquine|antibiotics|steroids|chemo|chemotherapy|dialysis"
)
# Conditions said as "I have X", "I suffer from X", "I was diagnosed with X".
CONDITIONS = alternation(
    "asthma|type 1 diabetes|type 2 diabetes|type one diabetes|type two diabetes|diabetes|gestational diabetes|"
    "epilepsy|migraines|migraine|chronic migraines|adhd|add|autism|dyslexia|dyspraxia|depression|anxiety|"
    "an anxiety disorder|ptsd|ocd|bipolar|bipolar disorder|high blood pressure|hypertension|low blood pressure|"
    "arthritis|rheumatoid arthritis|osteoarthritis|crohn's|crohn's disease|crohns|ibs|colitis|ulcerative colitis|"
    "celiac disease|coeliac disease|eczema|psoriasis|lupus|ms|multiple sclerosis|fibromyalgia|endometriosis|"
    "pcos|hypothyroidism|an underactive thyroid|hyperthyroidism|an overactive thyroid|long covid|chronic fatigue|"
    "chronic fatigue syndrome|me|sleep apnea|sleep apnoea|insomnia|tinnitus|a heart condition|heart disease|"
    "cancer|breast cancer|back pain|chronic pain|a herniated disc|a slipped disc|glaucoma|hay fever|hayfever|"
    "anemia|anaemia|high cholesterol|gout|kidney disease|kidney stones|sickle cell|scoliosis|pots|a pacemaker|"
    "vertigo|sciatica|hearing loss|a hearing aid|hearing aids|a stammer|a stutter|cerebral palsy|"
    "parkinson's|alzheimer's|dementia|hiv|hepatitis|a food intolerance|food intolerances|an eating disorder|"
    "anorexia|bulimia|panic attacks|seizures|a nut allergy|allergies|an autoimmune disease|diverticulitis|"
    "gastritis|acid reflux|reflux|gerd|osteoporosis|emphysema|copd|bronchitis|a weak heart|heart failure"
)
# Said as "I'm X" (an adjective or a state).
CONDITION_STATES = alternation(
    "diabetic|pre-diabetic|prediabetic|asthmatic|epileptic|anemic|anaemic|hypothyroid|hyperthyroid|autistic|"
    "dyslexic|dyspraxic|colorblind|colourblind|color blind|colour blind|deaf|partially deaf|hard of hearing|"
    "partially sighted|blind|visually impaired|celiac|coeliac|immunocompromised|immunosuppressed|neurodivergent|"
    "bipolar|in remission|on dialysis|a type 1 diabetic|a type 2 diabetic|a diabetic|an asthmatic|an epileptic|"
    "a coeliac|a celiac|wheelchair user|a wheelchair user|in a wheelchair|sober|in recovery|menopausal|"
    "going through menopause|recovering from surgery|recovering from cancer"
)
# What a short "I get X" names: recurring trouble.
RECURRING = alternation(
    "migraines|headaches|panic attacks|nosebleeds|seizures|cold sores|hay fever|hayfever|heartburn|reflux|"
    "motion sickness|car sick|carsick|seasick|sea sick|travel sick|nightmares|cramps|hives|eczema flare-ups|"
    "flare-ups|flares|fainting spells|dizzy spells|back pain"
)
INTOLERANCES = alternation(
    "lactose|gluten|fructose|histamine|wheat|dairy|caffeine|alcohol|soy|egg|fodmap|sulphite|sulfite|sugar|yeast"
)
BODY_PARTS = alternation(
    "acl|mcl|meniscus|achilles|achilles tendon|hamstring|hamstrings|calf|knee|knees|ankle|ankles|foot|feet|toe|"
    "toes|leg|legs|hip|hips|back|lower back|spine|neck|shoulder|shoulders|rotator cuff|arm|arms|elbow|elbows|wrist|"
    "wrists|hand|hands|finger|fingers|thumb|collarbone|collar bone|ribs|rib|nose|jaw|tooth|teeth|groin|head|"
    "left knee|right knee|left ankle|right ankle|left wrist|right wrist|left shoulder|right shoulder|left arm|"
    "right arm|left leg|right leg|left hand|right hand|left foot|right foot|left hip|right hip|pelvis|tendon|"
    "ligament|disc|back muscle"
)
INJURY_VERBS = (
    "tore|torn|broke|broken|sprained|twisted|fractured|injured|hurt|pulled|dislocated|strained|damaged|busted|"
    "cracked|bruised|snapped|ruptured|tweaked|jarred"
)
# Foods and drinks that "I don't eat X" or "I gave up X" is about.
FOODS = alternation(
    "meat|red meat|pork|beef|lamb|chicken|poultry|fish|seafood|shellfish|dairy|milk|cheese|eggs|gluten|wheat|"
    "sugar|refined sugar|alcohol|booze|caffeine|coffee|tea|nuts|processed food|processed foods|carbs|bread|"
    "fried food|junk food|fast food|soda|fizzy drinks|animal products|meat or fish|meat and fish|bacon|ham|"
    "gelatin|gelatine|onion|garlic|spicy food|sweets|chocolate|wine|beer|spirits|soft drinks|energy drinks"
)
DIETS = alternation(
    "vegetarian|veggie|vegan|strict vegan|pescatarian|pescetarian|flexitarian|plant-based|plant based|carnivore|"
    "omnivore|keto|paleo|raw vegan|lacto-ovo vegetarian|lacto vegetarian|ovo vegetarian|fruitarian|"
    "teetotal|teetotaller|teetotaler|tee-total"
)
DIET_PLANS = alternation(
    "keto|ketogenic|low carb|low-carb|low fodmap|low-fodmap|fodmap|paleo|mediterranean|gluten free|gluten-free|"
    "dairy free|dairy-free|sugar free|sugar-free|low fat|low-fat|low sodium|low salt|low sugar|whole30|vegan|"
    "vegetarian|plant based|plant-based|intermittent fasting|calorie controlled|high protein|carnivore|renal|"
    "diabetic|anti-inflammatory|elimination"
)
# The ways of eating a person "keeps" or "eats only": each has its own key.
OBSERVANCES = alternation("halal|kosher|organic|gluten free|gluten-free|dairy free|dairy-free|sugar free|sugar-free")

# Family: the key each relation is stored under. Partner and parents are one person each; the others are
# told apart by their names.
PARTNER_WORDS = (
    "wife|husband|partner|girlfriend|boyfriend|fiance|fiancé|fiancee|fiancée|spouse|other half|missus|hubby|better half"
)
CHILD_WORDS = (
    "daughter|son|kid|child|baby|baby boy|baby girl|little boy|little girl|boy|stepson|stepdaughter|step-son|"
    "step-daughter|twins|twin boys|twin girls|kids|children|sons|daughters|boys|girls|toddler|teenager|newborn"
)
PARENT_WORDS = "mother|mom|mum|mam|mommy|mummy|ma|father|dad|daddy|papa|stepmother|stepmom|stepmum|stepfather|stepdad"
RELATIVE_WORDS = (
    "brother|sister|twin brother|twin sister|half-brother|half-sister|stepbrother|stepsister|brothers|sisters|"
    "siblings|sibling|grandmother|grandma|granny|nan|nana|grandfather|grandpa|granddad|grandad|grandson|"
    "granddaughter|grandkids|grandchildren|grandchild|aunt|auntie|uncle|cousin|niece|nephew|mother-in-law|"
    "father-in-law|sister-in-law|brother-in-law|son-in-law|daughter-in-law|in-laws|parents|godson|goddaughter"
)
PET_WORDS = (
    "dog|dogs|puppy|pup|cat|cats|kitten|kitty|rabbit|rabbits|bunny|hamster|guinea pig|guinea pigs|parrot|budgie|"
    "horse|pony|tortoise|turtle|snake|lizard|gecko|ferret|chickens|goldfish|fish|rat|rats|mouse|bird|birds|"
    "labrador|lab|golden retriever|retriever|beagle|spaniel|cocker spaniel|terrier|poodle|collie|border collie|"
    "dachshund|husky|pug|bulldog|french bulldog|frenchie|greyhound|whippet|lurcher|german shepherd|corgi|"
    "chihuahua|schnauzer|doodle|labradoodle|cockapoo|tabby|ragdoll|maine coon|siamese"
)
FAMILY_WORDS = alternation("|".join((PARTNER_WORDS, CHILD_WORDS, PARENT_WORDS, RELATIVE_WORDS, PET_WORDS)))
# People named in the user's life whose own facts are not kept, only who they are.
CONTACT_WORDS = alternation(
    "manager|boss|line manager|team lead|tech lead|supervisor|colleague|coworker|co-worker|friend|best friend|"
    "mentor|cofounder|co-founder|teammate|landlord|landlady|assistant|doctor|gp|dentist|therapist|accountant|"
    "lawyer|solicitor|client|company|team|project|startup|business|flatmate|roommate|neighbour|neighbor"
)
# The key and the word a relation is stored under: "mum" and "mom" are one mother.
RELATION_KEYS = {
    **dict.fromkeys(each(PARTNER_WORDS), "partner"),
    **dict.fromkeys(each("mother|mom|mum|mam|mommy|mummy|ma"), "mother"),
    **dict.fromkeys(each("father|dad|daddy|papa"), "father"),
    **dict.fromkeys(each("stepmother|stepmom|stepmum"), "stepmother"),
    **dict.fromkeys(each("stepfather|stepdad"), "stepfather"),
    **dict.fromkeys(each("kid|kids|child|children|toddler|teenager|newborn|baby"), "children"),
    **dict.fromkeys(each("baby boy|little boy|boy|boys|sons"), "son"),
    **dict.fromkeys(each("baby girl|little girl|girls|daughters"), "daughter"),
    **dict.fromkeys(each("twins|twin boys|twin girls"), "twins"),
    **dict.fromkeys(each("grandma|granny|nan|nana"), "grandmother"),
    **dict.fromkeys(each("grandpa|granddad|grandad"), "grandfather"),
    **dict.fromkeys(each("grandkids|grandchildren|grandchild"), "grandchildren"),
    **dict.fromkeys(each("puppy|pup|dogs"), "dog"),
    **dict.fromkeys(each("kitten|kitty|cats|tabby|ragdoll|maine coon|siamese"), "cat"),
    **dict.fromkeys(each("bunny|rabbits"), "rabbit"),
    **dict.fromkeys(
        each(
            "labrador|lab|golden retriever|retriever|beagle|spaniel|cocker spaniel|terrier|poodle|collie|border collie|"
            "dachshund|husky|pug|bulldog|french bulldog|frenchie|greyhound|whippet|lurcher|german shepherd|corgi|"
            "chihuahua|schnauzer|doodle|labradoodle|cockapoo"
        ),
        "dog",
    ),
    "brothers": "brother",
    "sisters": "sister",
    "siblings": "sibling",
    "auntie": "aunt",
    "boss": "manager",
    "line manager": "manager",
    "co-worker": "coworker",
    "co-founder": "cofounder",
    "landlady": "landlord",
    "neighbor": "neighbour",
    "gp": "doctor",
}
# Relations spoken of as one person ("Their wife is Ana."); the others are had ("Has a daughter, Mia.").
SINGLE_RELATIONS = frozenset(
    ("partner", "mother", "father", "stepmother", "stepfather", "manager", "team lead", "tech lead", "supervisor")
)
PROFESSIONS = alternation(
    "engineer|software engineer|developer|programmer|teacher|professor|doctor|junior doctor|gp|nurse|midwife|"
    "manager|product manager|project manager|designer|ux designer|student|phd student|scientist|data scientist|"
    "lawyer|solicitor|barrister|writer|author|researcher|analyst|consultant|accountant|auditor|architect|artist|"
    "founder|co-founder|ceo|cto|cfo|coo|journalist|editor|pharmacist|chef|cook|baker|photographer|marketer|"
    "recruiter|lecturer|physician|surgeon|cardiologist|dermatologist|paediatrician|pediatrician|psychiatrist|"
    "psychologist|dentist|therapist|physiotherapist|physio|paramedic|firefighter|police officer|officer|"
    "economist|entrepreneur|freelancer|administrator|technician|mechanic|electrician|plumber|carpenter|builder|"
    "translator|interpreter|tester|software tester|qa engineer|devops engineer|sysadmin|librarian|social worker|"
    "carer|caregiver|care worker|teaching assistant|assistant|receptionist|cleaner|driver|taxi driver|"
    "bus driver|truck driver|lorry driver|pilot|flight attendant|cabin crew|soldier|farmer|gardener|vet|"
    "veterinarian|optician|optometrist|musician|singer|actor|actress|dancer|student nurse|intern|apprentice|"
    "tutor|coach|personal trainer|trainer|salesperson|sales rep|account manager|shop assistant|cashier|waiter|"
    "waitress|bartender|barista|hairdresser|barber|beautician|estate agent|real estate agent|banker|trader|"
    "investor|civil servant|policy advisor|advisor|adviser|secretary|paralegal|midwife|doula|counsellor|"
    "counselor|priest|vicar|rabbi|imam|tour guide|guide|translator|copywriter|illustrator|animator|game developer|"
    "web developer|frontend developer|backend developer|full stack developer|data engineer|data analyst|"
    "machine learning engineer|ml engineer|product designer|graphic designer|civil engineer|mechanical engineer|"
    "electrical engineer|chemist|biologist|physicist|mathematician|statistician|historian|archaeologist|"
    "geologist|stay-at-home dad|stay-at-home mum|stay-at-home mom|stay-at-home parent|homemaker|housewife|"
    "househusband|retiree|pensioner|volunteer|student teacher|head teacher|headteacher|principal|"
    "school teacher|primary school teacher|secondary school teacher|maths teacher|science teacher|"
    "english teacher|music teacher|yoga teacher|yoga instructor|instructor|lifeguard|security guard|"
    "warehouse worker|factory worker|nanny|childminder|au pair|sommelier|butcher|fishmonger|florist|tailor|"
    "seamstress|jeweller|jeweler|welder|roofer|painter|decorator|locksmith|courier|postman|postwoman|"
    "delivery driver|miner|sailor|fisherman|programme manager|program manager|head of sales|cto|vp"
)
# Capitalised words after "I'm" that are no name: nationalities and states are kept by other patterns.
NATIONALITIES = alternation(
    "american|british|english|scottish|welsh|irish|northern irish|canadian|australian|new zealander|"
    "french|german|dutch|belgian|swiss|austrian|italian|spanish|portuguese|brazilian|mexican|argentinian|"
    "argentine|chilean|colombian|peruvian|venezuelan|cuban|jamaican|nigerian|ghanaian|kenyan|ethiopian|"
    "south african|egyptian|moroccan|algerian|tunisian|turkish|greek|cypriot|polish|czech|slovak|hungarian|"
    "romanian|bulgarian|serbian|croatian|bosnian|slovenian|ukrainian|russian|belarusian|lithuanian|latvian|"
    "estonian|finnish|swedish|norwegian|danish|icelandic|indian|pakistani|bangladeshi|sri lankan|nepali|"
    "chinese|japanese|korean|south korean|vietnamese|thai|filipino|filipina|indonesian|malaysian|singaporean|"
    "taiwanese|iranian|iraqi|syrian|lebanese|jordanian|israeli|palestinian|saudi|emirati|afghan|somali|"
    "sudanese|ugandan|tanzanian|zimbabwean|zambian|senegalese|cameroonian|ivorian|haitian|dominican|"
    "puerto rican|ecuadorian|bolivian|uruguayan|paraguayan|costa rican|guatemalan|honduran|salvadoran|"
    "nicaraguan|panamanian|luxembourgish|maltese|albanian|macedonian|georgian|armenian|azerbaijani|kazakh|"
    "uzbek|mongolian|tibetan|kurdish|catalan|basque|galician|flemish"
)
LANGUAGES = alternation(
    "english|french|german|spanish|portuguese|italian|dutch|flemish|swedish|norwegian|danish|finnish|icelandic|"
    "polish|czech|slovak|hungarian|romanian|bulgarian|serbian|croatian|bosnian|slovenian|ukrainian|russian|"
    "greek|turkish|arabic|hebrew|persian|farsi|urdu|hindi|bengali|punjabi|gujarati|marathi|tamil|telugu|"
    "kannada|malayalam|sinhala|nepali|chinese|mandarin|cantonese|japanese|korean|vietnamese|thai|tagalog|"
    "filipino|indonesian|malay|swahili|amharic|yoruba|igbo|hausa|zulu|xhosa|afrikaans|somali|welsh|irish|"
    "gaelic|scots gaelic|catalan|basque|galician|latin|esperanto|sign language|bsl|asl|kurdish|pashto|"
    "albanian|armenian|georgian|lithuanian|latvian|estonian|maltese|luxembourgish|creole|haitian creole|"
    "portuguese|brazilian portuguese"
)
# Words after "I'm" (capitalised or not) that are a state, never a name.
NOT_NAMES = word_set("""
    fine ok okay good great well sorry back home here there ready done sure not also just so very the a an sick
    busy tired happy sad late early new old free available away off out in on up down glad thrilled excited
    nervous worried stressed bored hungry thirsty cold hot stuck lost confused curious afraid scared looking
    trying going getting working living moving thinking wondering hoping planning starting learning doing
    having feeling still really actually currently now almost nearly totally basically literally honestly
    super pretty quite kinda sorta afraid aware certain convinced sold done finished retired married single
    divorced engaged widowed pregnant vegan vegetarian celiac coeliac diabetic allergic lactose gluten male
    female christian muslim jewish catholic hindu buddhist sikh atheist agnostic protestant mormon orthodox
    gay straight bi bisexual lesbian trans nonbinary queer introvert extrovert introverted extroverted
    left-handed right-handed leftie lefty scorpio aries taurus gemini cancer virgo libra sagittarius
    capricorn aquarius pisces monday tuesday wednesday thursday friday saturday sunday today tomorrow tonight
    christmas easter someone nobody everyone everybody somebody one two three four five six seven eight nine
    ten each every all both either neither
    """)

MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
EVENTS = alternation(
    "meeting|appointment|deadline|interview|job interview|flight|trip|launch|release|demo|call|birthday party|"
    "wedding|exam|exams|test|driving test|conference|presentation|review|vacation|holiday|surgery|operation|"
    "scan|check-up|checkup|due date|party|dinner|lunch|date|match|game|race|marathon|half marathon|concert|gig|"
    "play|school play|recital|graduation|ceremony|funeral|visit|hearing|court date|viva|defense|defence|mot|"
    "inspection|parents' evening|housewarming|housewarming party|reunion|shift|session|class|lesson|"
    "performance|show|match|tournament|exhibition|opening|premiere|move|moving day|closing|completion|"
    "christening|baptism|bar mitzvah|bat mitzvah|hen do|stag do|bachelorette|baby shower|anniversary dinner"
)
# Words after "moved to" or "live in" that are no place: "I moved to Python", "I live in hope".
NOT_PLACES = word_set("""
    python java rust go javascript typescript english french german spanish night nights home weekends noon
    midnight christmas easter i hope fear denial mondays tuesdays wednesdays thursdays fridays saturdays sundays
    monday tuesday wednesday thursday friday saturday sunday january february march april may june july august
    september october november december jan feb mar apr jun jul aug sep sept oct nov dec the a an my our
    """)
